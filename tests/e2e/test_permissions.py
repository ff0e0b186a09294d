"""No approval click for gate's own commands (issue 29), in the real CLI's default permission mode.

`gate install` adds allow rules for the commands gate's messages tell the agent to run. The scripted agent reads
how the messages spell the command (`gate`, or the console script by absolute path when gate is not on PATH),
runs `search`, `show` and the MEMORY CHECK's `remember` line as shown, and each runs: its tool result is the
command's output, not a permission denial. A command outside the rules — another gate subcommand, or a gate
search with something chained to it — is not run. The plugin cannot add rules; `gate install --permissions-only`
adds them for it.

The runs pass no --allowedTools and no permission mode, so every Bash call goes through Claude Code's permission
check; in `-p` a call that would ask is refused with a tool error (there is nobody to click).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from claude_harness import Claude, E2EDirs, GateCli, filled_remember_command
from model_server import JSON, ModelServer, Reply, after_tool_call, last_user_contains, tail_contains, tail_text

pytestmark = pytest.mark.e2e

RECALL_MARK = "MEMORY SEARCH REQUIRED"
CHECK_MARK = "MEMORY CHECK:"

WATERFALL_TITLE = "Waterfall payments fill the reserve account before any distribution to noteholders"
WATERFALL_BODY = "The reserve trigger fires after 3 missed payments; see docs/waterfall.md."
WATERFALL_PROMPT = "How does the payment waterfall fill the reserve account when the trigger fires?"
FIX_PROMPT = "The reserve trigger test fails on the last day of the month, please fix it."
FIX_EXPLANATION = (
    "Fixed. The root cause was an off-by-one in the reserve trigger: it counted the current month as missed, "
    "so I changed the comparison from >= to > in trigger.py and the tests pass now."
)
STORED_TITLE = "Reserve trigger counts missed months strictly after the due date (off-by-one fixed in trigger.py)"

DENIED = ("requires approval", "need approval", "needs approval", "haven't granted")


def spelled_gate(shown: str) -> str:
    """How the recall message spells gate (its footer: "`<gate> show ID` prints one in full")."""
    match = re.search(r"`([^`]+) show ID`", shown)
    assert match, f"no `… show ID` in what the model was shown:\n{shown[-2000:]}"
    return match.group(1)


def tool_results(transcript: list[JSON]) -> list[tuple[str, JSON]]:
    """(the Bash command, its tool_result block) for every Bash call of the session, in order."""
    commands: dict[str, str] = {}
    out: list[tuple[str, JSON]] = []
    for line in transcript:
        content = line.get("message", {}).get("content") if isinstance(line.get("message"), dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if line.get("type") == "assistant" and block.get("type") == "tool_use" and block.get("name") == "Bash":
                commands[block["id"]] = block["input"]["command"]
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in commands:
                out.append((commands[block["tool_use_id"]], block))
    return out


def result_text(block: JSON) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


def path_without_gate() -> str:
    """The test process's PATH without any directory that holds a `gate`."""
    return os.pathsep.join(
        d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not os.path.exists(os.path.join(d, "gate"))
    )


@pytest.mark.parametrize("case", ["project", "local", "newcomer"])
def test_gate_commands_run_without_a_prompt_and_nothing_else_does(
    claude: Claude, gate: GateCli, model_server: ModelServer, e2e_dirs: E2EDirs, gate_bin: Path, case: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """project: gate on PATH (install.sh's ~/.local/bin link), the messages say `gate`, the committed rules
    allow it. local: gate not on PATH, the messages name the console script by absolute path, and local
    settings (never committed) allow that spelling too. newcomer: what the README's install.sh gives a new user
    whose ~/.local/bin is not on PATH — a project-scope install with gate off PATH, in a folder not trusted yet:
    the install allows the absolute spelling in the local settings, which apply without trust."""
    scope = "local" if case == "local" else "project"
    if case == "project":
        local_bin = e2e_dirs.home / ".local" / "bin"
        local_bin.mkdir(parents=True)
        (local_bin / "gate").symlink_to(gate_bin)
        claude.env_extra["PATH"] = f"{local_bin}{os.pathsep}{path_without_gate()}"
    else:
        claude.env_extra["PATH"] = path_without_gate()
    monkeypatch.setenv("PATH", claude.env_extra["PATH"])  # the installer's PATH is the user's, as Claude Code's
    gate.run("install", "--project", str(e2e_dirs.project), "--scope", scope)
    local = e2e_dirs.project / ".claude" / "settings.local.json"
    assert local.exists() == (case != "project"), "local rules exactly where the messages name an absolute path"
    if case != "newcomer":
        # Claude Code honours a project's permission rules only in a workspace the user trusted (its trust
        # dialog, answered once per folder in an interactive session; -p never asks). Recorded as it records it.
        (e2e_dirs.home / ".claude.json").write_text(
            json.dumps({"projects": {str(e2e_dirs.project): {"hasTrustDialogAccepted": True}}}), encoding="utf-8"
        )
    memory_id = gate.remember(WATERFALL_TITLE, "--kind", "decision", "--body", WATERFALL_BODY)
    victim = e2e_dirs.root / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("still here\n", encoding="utf-8")

    spelled: list[str] = []

    def search(body: JSON) -> Reply:
        spelled.append(spelled_gate(tail_text(body)))
        return Reply.bash(f"{spelled[0]} search reserve account waterfall", "Search memory")

    model_server.when(tail_contains(RECALL_MARK), search, times=1)
    model_server.when(
        after_tool_call("Bash", " search reserve"), lambda b: Reply.bash(f"{spelled[0]} show {memory_id}"), times=1
    )
    # Outside the rules: another subcommand of gate, and an allowed command with another one chained to it.
    model_server.when(after_tool_call("Bash", " show "), lambda b: Reply.bash(f"{spelled[0]} list"), times=1)
    model_server.when(
        after_tool_call("Bash", " list"),
        lambda b: Reply.bash(f"{spelled[0]} search reserve && rm -rf {victim}"),
        times=1,
    )
    model_server.when(after_tool_call("Bash", "rm -rf"), Reply.text("The reserve account is funded first."))
    # The next prompt: a fix that stores nothing, so the write-back gate shows its `remember` line.
    model_server.when(last_user_contains(FIX_PROMPT), Reply.bash("echo 'patched trigger.py: >= became >'"), times=1)
    model_server.when(after_tool_call("Bash", "patched trigger.py"), Reply.text(FIX_EXPLANATION), times=1)
    model_server.when(
        tail_contains(CHECK_MARK),
        lambda b: Reply.bash(
            filled_remember_command(
                tail_text(b), STORED_TITLE, body="Covered by test_trigger.py.", cues="reserve trigger off by one"
            ),
            "Store the fix in memory",
        ),
        times=1,
    )
    model_server.when(after_tool_call("Bash", " remember "), Reply.text("Stored the fix as a memory."))

    run = claude.session([WATERFALL_PROMPT, FIX_PROMPT], allowed_tools=())
    for flag in ("--allowedTools", "--permission-mode", "--dangerously-skip-permissions"):
        assert flag not in run.argv
    assert [t.result["result"] for t in run.turns if t.result] == [
        "The reserve account is funded first.",
        "Stored the fix as a memory.",
    ]
    script = "gate" if case == "project" else str(gate_bin)
    assert spelled == [script], "the messages spell gate as the rules of this scope allow it"

    results = tool_results(run.transcript())
    commands = [command for command, _ in results]
    steps = [c.split()[1] + (" &&" if "&&" in c else "") for c in commands if c.startswith(script + " ")]
    assert steps == ["search", "show", "list", "search &&", "remember"], commands
    by_step = {c.split()[1] + (" &&" if "&&" in c else ""): block for c, block in results if c.startswith(script)}

    for step, expected in (("search", WATERFALL_TITLE), ("show", WATERFALL_BODY), ("remember", "")):
        block = by_step[step]
        text = result_text(block)
        assert not block.get("is_error"), f"{step} was refused: {text}"
        assert not any(mark in text for mark in DENIED), f"{step} was refused: {text}"
        assert expected in text, f"{step}'s output is not in its tool result: {text}"
    stored = gate.search("reserve trigger off-by-one")["hits"]
    assert [h["title"] for h in stored][:1] == [STORED_TITLE]
    assert stored[0]["id"] in result_text(by_step["remember"]), "the agent saw the new memory's id"

    for step in ("list", "search &&"):
        block = by_step[step]
        assert block.get("is_error") and any(mark in result_text(block) for mark in DENIED), (step, block)
    assert (victim / "keep.txt").read_text(encoding="utf-8") == "still here\n", "the chained command ran"


def test_the_plugin_adds_no_rules_and_permissions_only_does(
    claude: Claude, gate: GateCli, model_server: ModelServer, e2e_dirs: E2EDirs, gate_bin: Path, gate_python: Path
) -> None:
    """Loaded with --plugin-dir, the plugin wires the hooks but cannot allow anything (Claude Code takes no
    permission rules from a plugin): the agent's `gate search` asks. `gate install --permissions-only --scope
    user`, run by the gate the plugin's hooks run, allows it as the messages spell it, and adds no hooks."""
    repo_root = Path(__file__).resolve().parents[2]
    claude.env_extra.update(GATE_PYTHON=str(gate_python), PATH=path_without_gate())
    memory_id = gate.remember(WATERFALL_TITLE, "--kind", "decision", "--body", WATERFALL_BODY)

    def search(body: JSON) -> Reply:
        return Reply.bash(f"{spelled_gate(tail_text(body))} search reserve account waterfall", "Search memory")

    model_server.when(tail_contains(RECALL_MARK), search)
    model_server.when(after_tool_call("Bash", " search reserve"), Reply.text("Searched."))

    def searched(run_args: list[str]) -> JSON:
        run = claude.run(WATERFALL_PROMPT, allowed_tools=(), args=run_args)
        [(command, block)] = tool_results(run.transcript())
        assert command.startswith(f"{gate_bin} search "), command  # the plugin's messages: the script by path
        return block

    denied = searched(["--plugin-dir", str(repo_root)])
    assert denied.get("is_error") and any(mark in result_text(denied) for mark in DENIED), denied

    gate.run("install", "--permissions-only", "--scope", "user", "--project", str(e2e_dirs.project))
    user_settings = json.loads((e2e_dirs.home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert set(user_settings) == {"permissions"}, "rules only, no hooks: the plugin wires those"
    allowed = searched(["--plugin-dir", str(repo_root)])
    assert not allowed.get("is_error") and WATERFALL_TITLE in result_text(allowed), allowed
    assert memory_id in result_text(allowed)
