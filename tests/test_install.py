"""`gate install` / `gate uninstall` on real settings files, the hook commands they write, and the plugin files.

The complaints of users of peer tools are the spec: installers that overwrote settings.json, uninstallers that
left hooks behind, hooks that silently never ran. So: every other byte of a settings file survives a round
trip, invalid files are refused untouched, and the commands written run with no PATH at all.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gate import render
from gate.install import jsonedit, launcher, permissions, wiring
from gate.install.files import backup_dir_for
from gate.paths import audit_log_file, error_log_file

REPO = Path(__file__).resolve().parents[1]
Gate = Callable[..., tuple[int, str, str]]

RICH = """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(npm run test:*)",
      "Read(~/.zshrc)"
    ],
    "deny": [
      "Read(./.env)"
    ]
  },
  "env": {
    "FOO": "bär ✓",
    "ESCAPED": "\\u00e9\\n"
  },
  "hooks": {
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "echo 'user hook' >> /tmp/log"
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [
          {
            "type": "command",
            "command": "prettier --write \\"$CLAUDE_FILE\\"",
            "timeout": 30
          }
        ]
      }
    ]
  },
  "someUnknownKey": {
    "nested": [1, 2.5, true, null, "x"]
  },
  "numbers": [1e3, -0.5, 0]
}
"""

# Hand-written styles that a re-serialising installer would destroy: four-space indent with inline arrays,
# tabs, and one-line JSON without a trailing newline.
FOUR_SPACES = (
    '{\n    "permissions": {"allow": ["Bash(ls)", "Read"]},\n    "hooks": {\n        "Stop": [\n'
    '            {"hooks": [{"type": "command", "command": "say done"}]}\n        ]\n    }\n}\n'
)
TABS = '{\n\t"model": "sonnet",\n\t"env": {\n\t\t"A": "1"\n\t}\n}\n'
ONE_LINE = '{"model":"haiku","hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}'


def settings_file(project: Path, scope: str = "project") -> Path:
    name = "settings.local.json" if scope == "local" else "settings.json"
    return project / ".claude" / name


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def install(gate: Gate, project: Path, *args: str) -> tuple[int, str, str]:
    return gate("install", "--project", str(project), *args)


def uninstall(gate: Gate, project: Path, *args: str) -> tuple[int, str, str]:
    return gate("uninstall", "--project", str(project), *args)


def gate_groups(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {
        event: [g for g in groups if any(wiring.is_gate_command(h.get("command")) for h in g["hooks"])]
        for event, groups in data.get("hooks", {}).items()
    }


def assert_wired(data: dict[str, Any], python: str = sys.executable, scope: str = "project") -> None:
    """Gate's groups, each once; project scope runs this machine's launcher (which runs `python`), the other
    scopes `python` itself."""
    groups = gate_groups(data)
    for spec in wiring.EVENTS:
        assert len(groups[spec.event]) == 1, spec.event
        group = groups[spec.event][0]
        assert group.get("matcher") == spec.matcher
        (entry,) = group["hooks"]
        assert entry["type"] == "command"
        assert entry["timeout"] == spec.timeout
        if scope == "project":
            assert entry["command"] == wiring.commands_for("project", python)[spec.event]
            assert launcher.interpreter() == python
            assert python not in entry["command"]  # a committed file names no path of this machine
        else:  # the launcher's own command
            argv = shlex.split(entry["command"], comments=True)
            assert argv == launcher.hook_argv(python)
            if python == sys.executable:  # gate is here: no `site`, the hook's import directories named
                assert argv[:4] == [python, "-I", "-S", "-c"], argv
                assert argv[4].endswith("from gate.hook import entry; entry()") and str(REPO) in argv[4]
            else:  # an interpreter that does not hold gate (a bare symlink): the plain form, through `site`
                assert argv == [python, "-P", "-c", "from gate.hook import main; main()"]


@pytest.fixture(autouse=True)
def _no_claude_config_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)


# --- merge ----------------------------------------------------------------------------------------------------


def test_install_into_missing_file_creates_it(gate: Gate, project: Path) -> None:
    code, out, _ = install(gate, project)
    assert code == 0
    path = settings_file(project)
    assert str(path) in out
    assert_wired(json.loads(path.read_text()))
    assert Path(sys.executable).is_absolute()
    # Claude Code's own style: two-space JSON and a final newline; readable by others, as any settings file.
    assert path.read_text().startswith('{\n  "hooks": {\n')
    assert path.read_text().endswith("}\n")
    assert stat.S_IMODE(path.stat().st_mode) & 0o044 == 0o044


@pytest.mark.parametrize("text", ["", "\n", "{}", "{}\n"])
def test_install_into_empty_file(gate: Gate, project: Path, text: str) -> None:
    path = write(settings_file(project), text)
    assert install(gate, project)[0] == 0
    assert_wired(json.loads(path.read_text()))


def test_timeouts_and_matchers(gate: Gate, project: Path) -> None:
    install(gate, project)
    data = json.loads(settings_file(project).read_text())
    ups = gate_groups(data)["UserPromptSubmit"][0]
    assert "matcher" not in ups and ups["hooks"][0]["timeout"] <= 15  # well under Claude Code's 30 s default
    assert gate_groups(data)["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    # A regular expression (Claude Code tests one that is no plain list as such): each tool name whole, and the
    # MCP tools whose name says they write.
    matcher = re.compile(gate_groups(data)["PreToolUse"][0]["matcher"])
    for tool in ("Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Grep", "Glob", "Bash", "Agent", "Task",
                 "mcp__filesystem__write_file", "mcp__github__createIssue"):
        assert matcher.search(tool), tool
    for tool in ("ReadMcpResourceTool", "TaskStop", "BashOutput", "mcp__filesystem__read_file", "mcp__x__settings"):
        assert not matcher.search(tool), tool
    assert "matcher" not in gate_groups(data)["SubagentStop"][0]  # audited only, every subagent


def test_install_into_rich_file_keeps_everything(gate: Gate, project: Path) -> None:
    path = write(settings_file(project), RICH)
    before = json.loads(RICH)
    assert install(gate, project)[0] == 0
    after = json.loads(path.read_text())
    assert_wired(after)
    # Every key, in its order, with its value; other hooks first in their lists, untouched.
    assert list(after)[: len(before)] == list(before)
    for key in before:
        if key not in ("hooks", "permissions"):
            assert after[key] == before[key]
    # The user's rules stay first, in their order; gate's allow rules follow them; deny is untouched.
    assert after["permissions"]["allow"] == before["permissions"]["allow"] + permissions.desired_rules(
        "project", sys.executable
    )
    assert after["permissions"]["deny"] == before["permissions"]["deny"]
    assert after["hooks"]["UserPromptSubmit"][0] == before["hooks"]["UserPromptSubmit"][0]
    assert after["hooks"]["PostToolUse"] == before["hooks"]["PostToolUse"]
    # The original text is still there line for line: gate only added lines.
    added = set(path.read_text().splitlines()) - set(RICH.splitlines())
    assert all(line.strip() for line in added)
    # Every original line is still there, or with the comma JSON needs before what gate appended after it.
    lines = path.read_text().splitlines()
    assert all(line in lines or line + "," in lines for line in RICH.splitlines())


@pytest.mark.parametrize("text", [RICH, FOUR_SPACES, TABS, ONE_LINE], ids=["rich", "four", "tabs", "oneline"])
def test_uninstall_restores_the_file_byte_for_byte(gate: Gate, project: Path, text: str) -> None:
    path = write(settings_file(project), text)
    assert install(gate, project)[0] == 0
    assert path.read_text() != text
    assert_wired(json.loads(path.read_text()))
    assert uninstall(gate, project)[0] == 0
    assert path.read_bytes() == text.encode("utf-8")


def test_indentation_style_is_kept(gate: Gate, project: Path) -> None:
    path = write(settings_file(project), FOUR_SPACES)
    install(gate, project)
    lines = path.read_text().splitlines()
    assert '        "SessionStart": [' in lines  # the file's four spaces, at the depth of "Stop"
    tabbed = write(settings_file(project, "local"), TABS)
    install(gate, project, "--scope", "local")
    assert '\t"hooks": {' in tabbed.read_text().splitlines()
    one_line = write(project / "other" / ".claude" / "settings.json", ONE_LINE)
    (project / "other" / ".git").mkdir()
    install(gate, project / "other")
    assert "\n" not in one_line.read_text()


def test_install_is_idempotent(gate: Gate, project: Path) -> None:
    path = write(settings_file(project), RICH)
    install(gate, project)
    once = path.read_bytes()
    backups = sorted(backup_dir_for(path).iterdir())
    code, out, _ = install(gate, project)
    assert code == 0 and "nothing changed" in out
    assert path.read_bytes() == once
    assert sorted(backup_dir_for(path).iterdir()) == backups  # no write, so no new backup


def test_reinstall_with_another_interpreter_replaces_the_entries(gate: Gate, project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other venv" / "bin" / "python"
    other.parent.mkdir(parents=True)
    other.symlink_to(sys.executable)
    path = write(settings_file(project, "local"), RICH)
    install(gate, project, "--scope", "local")
    assert install(gate, project, "--scope", "local", "--python", str(other))[0] == 0
    data = json.loads(path.read_text())
    assert_wired(data, python=str(other), scope="local")
    assert f"'{other}'" in gate_groups(data)["Stop"][0]["hooks"][0]["command"]  # a path with a space is quoted
    install(gate, project, "--scope", "local")
    assert_wired(json.loads(path.read_text()), scope="local")
    uninstall(gate, project, "--scope", "local")
    assert path.read_text() == RICH


def test_reinstall_in_project_scope_changes_the_launcher_not_the_committed_file(
    gate: Gate, project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other venv" / "bin" / "python"
    other.parent.mkdir(parents=True)
    other.symlink_to(sys.executable)
    path = write(settings_file(project), RICH)
    install(gate, project)
    committed = path.read_bytes()
    code, out, _ = install(gate, project, "--python", str(other))
    assert code == 0 and "nothing changed" in out and str(other) in out
    assert path.read_bytes() == committed
    assert_wired(json.loads(path.read_text()), python=str(other))
    assert f"'{other}'" in launcher.path().read_text()  # a path with a space is quoted


def test_install_backs_up_the_previous_file(gate: Gate, project: Path) -> None:
    path = write(settings_file(project), RICH)
    code, out, _ = install(gate, project)
    assert code == 0
    (saved,) = [p for p in backup_dir_for(path).iterdir() if p.name != "ORIGIN"]
    assert saved.read_text() == RICH
    assert str(saved) in out
    assert not any(p.name.endswith((".bak", ".tmp")) for p in path.parent.iterdir())  # no litter in the repo


# --- refusals ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ['{"hooks": {', '{"a": 1,}', "{'a': 1}", '{"a": NaN}', "// comment\n{}", '{"a": 1} {"b": 2}'],
)
@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_invalid_json_is_refused_untouched(gate: Gate, project: Path, text: str, command: str) -> None:
    path = write(settings_file(project), text)
    mtime = path.stat().st_mtime_ns
    code, out, err = gate(command, "--project", str(project))
    assert code != 0
    assert "not valid JSON" in err and "line" in err and "hint:" in err
    assert "nothing was changed" in err
    assert path.read_text() == text and path.stat().st_mtime_ns == mtime
    assert not backup_dir_for(path).exists()


@pytest.mark.parametrize("text", ["[]", '"x"', '{"hooks": []}', '{"hooks": {"Stop": {}}}'])
def test_wrong_shape_is_refused_untouched(gate: Gate, project: Path, text: str) -> None:
    path = write(settings_file(project), text)
    code, _, err = install(gate, project)
    assert code != 0 and "nothing was changed" in err
    assert path.read_text() == text


def test_missing_interpreter_is_refused(gate: Gate, project: Path, tmp_path: Path) -> None:
    code, _, err = install(gate, project, "--python", str(tmp_path / "nope" / "python"))
    assert code != 0 and "does not exist" in err
    assert not settings_file(project).exists()


# --- dry run ----------------------------------------------------------------------------------------------------


def test_dry_run_writes_nothing(gate: Gate, project: Path) -> None:
    code, out, _ = install(gate, project, "--dry-run")
    assert code == 0
    assert out.startswith("--- /dev/null\n+++ ")
    assert "+" in out and wiring.MARKER in out
    assert not settings_file(project).exists()
    assert not (project / ".claude").exists()
    assert not launcher.path().exists()

    path = write(settings_file(project), RICH)
    code, out, _ = install(gate, project, "--dry-run")
    assert code == 0 and f"--- {path}" in out
    added = [line for line in out.splitlines() if line.startswith("+") and not line.startswith("+++")]
    removed = [line for line in out.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert added
    assert all(line[1:] + "," in [a[1:] for a in added] for line in removed)  # removed only to gain a comma
    assert path.read_text() == RICH
    assert not backup_dir_for(path).exists()

    install(gate, project)
    installed = path.read_text()
    code, out, _ = uninstall(gate, project, "--dry-run")
    assert code == 0 and "-" in out and path.read_text() == installed
    code, out, _ = install(gate, project, "--dry-run")
    assert "nothing to change" in out


# --- uninstall --------------------------------------------------------------------------------------------------


def test_uninstall_removes_only_gate_entries(gate: Gate, project: Path) -> None:
    path = write(settings_file(project), RICH)
    install(gate, project)
    # Someone hand-moves a user hook into gate's Stop group, and gate's entry into a user group.
    data = json.loads(path.read_text())
    stop_group = gate_groups(data)["Stop"][0]
    stop_group["hooks"].append({"type": "command", "command": "notify-send done"})
    data["hooks"]["PostToolUse"][0]["hooks"].append(dict(stop_group["hooks"][0]))
    write(path, json.dumps(data, indent=2) + "\n")
    assert uninstall(gate, project)[0] == 0
    after = json.loads(path.read_text())
    assert not wiring.find_gate_entries(after)
    assert after["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    assert after["hooks"]["PostToolUse"] == json.loads(RICH)["hooks"]["PostToolUse"]
    assert after["hooks"]["UserPromptSubmit"] == json.loads(RICH)["hooks"]["UserPromptSubmit"]
    assert set(after["hooks"]) == {"UserPromptSubmit", "PostToolUse", "Stop"}  # emptied event lists removed


def test_uninstall_removes_a_file_gate_created(gate: Gate, project: Path) -> None:
    install(gate, project)
    assert settings_file(project).exists()
    code, out, _ = uninstall(gate, project)
    assert code == 0 and "removed the file" in out
    assert not settings_file(project).exists()
    assert not (project / ".claude").exists()


def test_uninstall_keeps_a_file_the_user_had(gate: Gate, project: Path) -> None:
    path = write(settings_file(project), "{}\n")
    install(gate, project)
    uninstall(gate, project)
    assert path.read_text() == "{}\n"


def test_uninstall_without_gate_entries_changes_nothing(gate: Gate, project: Path) -> None:
    path = write(settings_file(project), RICH)
    code, out, _ = uninstall(gate, project)
    assert code == 0 and "no gate hooks" in out
    assert path.read_text() == RICH and not backup_dir_for(path).exists()
    code, out, _ = uninstall(gate, project, "--scope", "local")
    assert code == 0 and not settings_file(project, "local").exists()


def test_uninstall_all_scopes(gate: Gate, project: Path) -> None:
    user = write(Path.home() / ".claude" / "settings.json", RICH)
    for scope in ("project", "local", "user"):
        assert install(gate, project, "--scope", scope)[0] == 0
    assert wiring.find_gate_entries(json.loads(user.read_text()))
    assert uninstall(gate, project, "--scope", "all")[0] == 0
    assert user.read_text() == RICH
    assert not settings_file(project).exists() and not settings_file(project, "local").exists()


# --- scopes and files -------------------------------------------------------------------------------------------


def test_scopes_write_where_claude_code_reads(gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(gate, project, "--scope", "local")
    assert_wired(json.loads(settings_file(project, "local").read_text()), scope="local")
    assert not settings_file(project).exists()
    install(gate, project, "--scope", "user")
    assert_wired(json.loads((Path.home() / ".claude" / "settings.json").read_text()), scope="user")
    moved = project.parent / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(moved))
    install(gate, project, "--scope", "user")
    assert_wired(json.loads((moved / "settings.json").read_text()), scope="user")


def test_install_from_a_subdirectory_targets_the_project_root(
    gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert gate("install")[0] == 0
    assert settings_file(project).exists() and not (sub / ".claude").exists()


def test_symlinked_settings_stay_a_symlink_and_mode_is_kept(gate: Gate, project: Path, tmp_path: Path) -> None:
    real = write(tmp_path / "dotfiles" / "settings.json", RICH)
    real.chmod(0o600)
    link = settings_file(project)
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    install(gate, project)
    assert link.is_symlink()
    assert_wired(json.loads(real.read_text()))
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    uninstall(gate, project)
    assert link.is_symlink() and real.read_text() == RICH


def test_byte_order_mark_is_kept(gate: Gate, project: Path) -> None:
    path = settings_file(project)
    path.parent.mkdir(parents=True)
    path.write_bytes("\ufeff".encode() + RICH.encode())
    assert install(gate, project)[0] == 0
    assert path.read_bytes().startswith("\ufeff".encode())
    uninstall(gate, project)
    assert path.read_bytes() == "\ufeff".encode() + RICH.encode()


# --- allow rules for gate's own commands ---------------------------------------------------------------------


SCRIPT = str(Path(sys.executable).parent / "gate")  # the console script beside the test interpreter
PORTABLE_RULES = [f"Bash(gate {sub} *)" for sub in ("search", "show", "remember", "verify", "done")]
ABSOLUTE_RULES = [f"Bash({shlex.quote(SCRIPT)} {sub} *)" for sub in ("search", "show", "remember", "verify", "done")]


def allow(path: Path) -> list[str]:
    return list(json.loads(path.read_text()).get("permissions", {}).get("allow", []))


def test_install_allows_gate_commands_as_each_scope_may_spell_them(gate: Gate, project: Path) -> None:
    assert Path(SCRIPT).is_file()
    code, out, _ = install(gate, project)
    assert code == 0 and "allowed without an approval prompt" in out
    assert allow(settings_file(project)) == PORTABLE_RULES  # committed: no path of this machine
    assert SCRIPT not in settings_file(project).read_text().split('"permissions"')[1]
    assert install(gate, project, "--scope", "local")[0] == 0
    assert allow(settings_file(project, "local")) == PORTABLE_RULES + ABSOLUTE_RULES


def _gate_off_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH with git on it and no gate: gate's messages then name the console script by absolute path."""
    git = shutil.which("git")
    assert git is not None
    monkeypatch.setenv("PATH", os.path.dirname(git))
    assert shutil.which("gate") is None


def _git_project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_project_install_off_path_allows_the_absolute_spelling_on_this_machine(
    gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gate not on PATH: the committed file keeps the `gate` rules only, the local settings get the spelling
    the messages will use, and a project-scope uninstall takes both back (the files gate created, and .claude/)."""
    _gate_off_path(monkeypatch)
    code, out, _ = install(gate, project)
    assert code == 0 and "gate is not on PATH" in out
    assert allow(settings_file(project)) == PORTABLE_RULES
    assert json.loads(settings_file(project, "local").read_text()) == {
        "permissions": {"allow": PORTABLE_RULES + ABSOLUTE_RULES}
    }
    assert render.gate_command() == shlex.quote(SCRIPT)  # what the local rules are for
    code, out, _ = install(gate, project)
    assert code == 0 and "gate is not on PATH" not in out  # a re-run changes nothing
    code, out, _ = uninstall(gate, project)
    assert code == 0 and str(settings_file(project, "local")) in out
    assert not (project / ".claude").exists()


def test_project_install_on_path_writes_no_local_settings(
    gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "on-path"
    bin_dir.mkdir()
    (bin_dir / "gate").symlink_to(SCRIPT)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert install(gate, project)[0] == 0
    assert not settings_file(project, "local").exists()


def test_project_uninstall_leaves_a_local_scope_install_alone(
    gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Local settings that wire gate's hooks belong to a local-scope install: `--scope local` removes them."""
    _gate_off_path(monkeypatch)
    install(gate, project, "--scope", "local")
    before = settings_file(project, "local").read_text()
    install(gate, project)
    uninstall(gate, project)
    assert settings_file(project, "local").read_text() == before
    assert not settings_file(project).exists()


def test_project_install_dry_run_shows_the_local_rules_and_writes_nothing(
    gate: Gate, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _gate_off_path(monkeypatch)
    code, out, _ = install(gate, project, "--dry-run")
    assert code == 0 and "settings.local.json" in out and ABSOLUTE_RULES[0] in out
    assert not (project / ".claude").exists()


def test_local_settings_are_kept_out_of_git_and_uninstall_takes_the_line_back(
    gate: Gate, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The local file names this machine's paths, and Claude Code ignores it only when it creates it: where git
    would commit it (`git add -A`), the install adds it to the project's .gitignore, and the uninstall takes back
    exactly what the install added."""
    _gate_off_path(monkeypatch)
    repo = _git_project(tmp_path)
    code, out, _ = install(gate, repo)
    assert code == 0 and ".gitignore" in out, out
    ignored = subprocess.run(["git", "check-ignore", "-q", ".claude/settings.local.json"], cwd=repo)
    assert ignored.returncode == 0  # git ignores it now
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=repo, capture_output=True, text=True)
    assert staged.stdout.split() == [".claude/settings.json", ".gitignore"]  # what a teammate gets, no more
    assert install(gate, repo)[1].count(".gitignore") == 0  # a re-run adds nothing
    uninstall(gate, repo)
    assert not (repo / ".gitignore").exists() and not (repo / ".claude").exists()  # gate created both

    mine = "node_modules/\n*.log\n"
    (repo / ".gitignore").write_text(mine)
    install(gate, repo, "--scope", "local")
    assert (repo / ".gitignore").read_text().startswith(mine) and "/.claude/settings.local.json" in (
        repo / ".gitignore").read_text()
    uninstall(gate, repo, "--scope", "local")
    assert (repo / ".gitignore").read_text() == mine  # byte for byte

    (repo / ".gitignore").write_text(".claude/settings.local.json\n")  # the project ignores it already
    code, out, _ = install(gate, repo)
    assert code == 0 and ".gitignore" not in out
    assert (repo / ".gitignore").read_text() == ".claude/settings.local.json\n"


def test_rules_are_spelled_as_the_messages_spell_gate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The rules follow gate/render.py: `gate` when it resolves on PATH to this installation, else the script."""
    monkeypatch.setenv("PATH", str(tmp_path))
    spelled = render.gate_command()
    assert spelled == shlex.quote(SCRIPT)
    assert permissions.rule(spelled, "search") in permissions.desired_rules("local", sys.executable)
    (tmp_path / "gate").symlink_to(SCRIPT)
    assert render.gate_command() == "gate"
    assert permissions.rule("gate", "search") in permissions.desired_rules("project", sys.executable)


def test_rules_cover_exactly_the_commands_the_messages_name() -> None:
    """Every `{gate} SUBCOMMAND` in the agent's messages is allowed, and nothing the messages do not name."""
    text = (REPO / "rules" / "messages.toml").read_text(encoding="utf-8")
    named = set(re.findall(r"\{gate\} (\w+)", text))
    assert named == set(permissions.SUBCOMMANDS)


@pytest.mark.parametrize(
    ("rule", "ours"),
    [
        ("Bash(gate search *)", True),
        ("Bash(/opt/old venv/bin/gate show *)", False),  # unquoted space: not how gate spells a path
        ("Bash('/opt/old venv/bin/gate' show *)", True),
        ("Bash(/opt/venv/bin/gate remember *)", True),
        ("Bash(gate search:*)", False),  # the user's own, in the older syntax
        ("Bash(gate mute *)", False),
        ("Bash(gatekeeper search *)", False),
        ("Bash(gate search)", False),
        ("Bash(gate *)", False),
        ("Bash(rm -rf /x/gate search *)", False),
    ],
)
def test_gate_rules_are_recognised_by_shape(rule: str, ours: bool) -> None:
    assert permissions.is_gate_rule(rule) is ours


@pytest.mark.parametrize("rule", [
    "Bash(mygate search *)",
    "Bash(tollgate remember *)",
    "Bash(./bin/notgate show *)",
    "Bash(/opt/tools/notgate verify *)",
    "Bash('/opt/old venv/bin/notgate' search *)",
    "Bash(bin/gate search *)",  # a relative path: gate's messages never spell it so
])
def test_a_rule_for_another_program_whose_name_ends_in_gate_is_not_gates(rule: str) -> None:
    """Uninstall removes what is_gate_rule accepts: a user's rule for `mygate` or `tollgate` must stay theirs."""
    assert permissions.is_gate_rule(rule) is False
    assert permissions.gate_rules({"permissions": {"allow": [rule, "Bash(gate search *)"]}}) == [
        "Bash(gate search *)"]


def test_uninstall_removes_only_gate_rules(gate: Gate, project: Path) -> None:
    path = write(settings_file(project), FOUR_SPACES)  # inline "allow": ["Bash(ls)", "Read"]
    install(gate, project)
    data = json.loads(path.read_text())
    data["permissions"]["allow"] += ["Bash(gate search:*)", "Bash(gate mute *)", "Bash(make test)"]
    path.write_text(json.dumps(data, indent=4) + "\n")
    uninstall(gate, project)
    after = json.loads(path.read_text())
    kept = ["Bash(ls)", "Read", "Bash(gate search:*)", "Bash(gate mute *)", "Bash(make test)"]
    assert after["permissions"]["allow"] == kept
    assert "hooks" in after and not gate_groups(after).get("Stop")


def test_reinstall_replaces_the_rules_of_another_interpreter(gate: Gate, project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other venv" / "bin"
    other.mkdir(parents=True)
    (other / "python").symlink_to(sys.executable)
    (other / "gate").symlink_to(SCRIPT)
    path = write(settings_file(project, "local"), RICH)
    install(gate, project, "--scope", "local", "--python", str(other / "python"))
    quoted = shlex.quote(str(other / "gate"))
    assert quoted.startswith("'") and f"Bash({quoted} show *)" in allow(path)  # quoted as the messages quote it
    install(gate, project, "--scope", "local")
    assert allow(path) == ["Bash(npm run test:*)", "Read(~/.zshrc)", *PORTABLE_RULES, *ABSOLUTE_RULES]
    uninstall(gate, project, "--scope", "local")
    assert path.read_text() == RICH


def test_permissions_only_adds_rules_and_no_hooks(gate: Gate, project: Path) -> None:
    code, out, _ = install(gate, project, "--scope", "local", "--permissions-only")
    assert code == 0 and "allow rules" in out
    path = settings_file(project, "local")
    assert json.loads(path.read_text()) == {"permissions": {"allow": PORTABLE_RULES + ABSOLUTE_RULES}}
    code, out, _ = install(gate, project, "--scope", "local", "--permissions-only")
    assert code == 0 and "nothing changed" in out
    assert uninstall(gate, project, "--scope", "local")[0] == 0
    assert not path.exists()  # gate had created it


def test_rules_go_where_the_file_has_none_yet(gate: Gate, project: Path) -> None:
    for text in ('{"permissions": {"deny": ["Read(./.env)"]}}\n', '{\n  "permissions": {\n    "allow": []\n  }\n}\n'):
        path = write(settings_file(project), text)
        install(gate, project)
        assert allow(path) == PORTABLE_RULES
        uninstall(gate, project)
        if "deny" in text:
            assert path.read_text() == text
        else:  # an emptied list (and what only it filled) goes with gate's last rule, as emptied hooks lists do
            assert json.loads(path.read_text()) == {}


@pytest.mark.parametrize("text", ['{"permissions": []}', '{"permissions": {"allow": "Bash"}}', "[]"])
@pytest.mark.parametrize("only", [False, True])
def test_misshapen_permissions_are_refused_untouched(gate: Gate, project: Path, text: str, only: bool) -> None:
    path = write(settings_file(project), text)
    code, _, err = install(gate, project, *(["--permissions-only"] if only else []))
    assert code != 0 and "nothing was changed" in err
    assert ("top level" if text == "[]" else "permissions") in err
    assert path.read_text() == text


# --- the editor itself ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        '{"a": []}',
        '{\n  "a": [\n    1\n  ]\n}',
        '[\n  {"x": 1}, {\n    "y": [2, 3]\n  }\n]',
        '{ "k" : "v\\"}" , "n" : { } }',
    ],
)
def test_editor_append_then_remove_is_exact(text: str) -> None:
    root = jsonedit.parse(text)
    unit = jsonedit.detect_indent_unit(text, root)
    key = "added" if root.kind == "object" else None
    grown = jsonedit.append_child(text, root, {"z": [1, {"w": "ü"}]}, unit, key=key)
    expected = json.loads(text)
    if key:
        expected[key] = {"z": [1, {"w": "ü"}]}
    else:
        expected.append({"z": [1, {"w": "ü"}]})
    assert json.loads(grown) == expected
    grown_root = jsonedit.parse(grown)
    shrunk = jsonedit.remove_child(grown, grown_root, len(grown_root.children) - 1)
    if json.loads(text):  # an emptied container comes back as {} / []
        assert shrunk == text


# --- the installed commands run as Claude Code runs them ----------------------------------------------------------


def _synthetic(project: Path, name: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": "test-install-empty-env",
        "transcript_path": str(project / "no-transcript.jsonl"),
        "cwd": str(project),
        "hook_event_name": name,
        **fields,
    }


SYNTHETIC_FIELDS: dict[str, dict[str, Any]] = {
    "SessionStart": {"source": "startup"},
    "UserPromptSubmit": {
        "prompt": "How does the reserve account waterfall trigger work?",
        "permission_mode": "default",
    },
    "PreToolUse": {"tool_name": "Read", "tool_input": {"file_path": "README.md"}, "tool_use_id": "toolu_1"},
    "Stop": {"stop_hook_active": False, "last_assistant_message": "Done."},
    "PreCompact": {"trigger": "manual", "custom_instructions": ""},
    "SubagentStop": {"agent_id": "a1b2c3", "agent_type": "Explore", "stop_hook_active": False},
}


def test_installed_commands_answer_with_an_empty_environment(gate: Gate, project: Path) -> None:
    """Hooks must work whatever PATH the session has: here there is none at all.

    Only HOME and GATE_HOME are passed, so that the run writes into the test's temp dirs and not into the
    real user's state; nothing else (no PATH, no VIRTUAL_ENV, no PYTHONPATH) reaches the hook.
    """
    assert gate("remember", "The reserve account waterfall triggers at 30 days overdue", "--kind", "decision")[0] == 0
    install(gate, project)
    data = json.loads(settings_file(project).read_text())
    env = {"HOME": os.environ["HOME"], "GATE_HOME": os.environ["GATE_HOME"]}
    for spec in wiring.EVENTS:
        (group,) = gate_groups(data)[spec.event]
        command = group["hooks"][0]["command"]
        proc = subprocess.run(
            ["/bin/sh", "-c", command],
            input=json.dumps(_synthetic(project, spec.event, **SYNTHETIC_FIELDS[spec.event])),
            capture_output=True,
            text=True,
            env=env,
            cwd=project,
            timeout=60,
        )
        assert proc.returncode == 0, (spec.event, proc.stderr)
        out = proc.stdout.strip()
        if out:  # exactly one JSON object, or nothing
            answer = json.loads(out)
            assert isinstance(answer, dict), spec.event
            if "hookSpecificOutput" in answer:
                assert answer["hookSpecificOutput"]["hookEventName"] == spec.event
        if spec.event in ("UserPromptSubmit", "SubagentStop"):
            assert "decision" not in (json.loads(out) if out else {})  # never blocks a prompt or a subagent
    assert not Path(error_log_file()).exists() or not Path(error_log_file()).read_text().strip()


def _run_committed(command: str, project: Path, home: Path, event: str) -> subprocess.CompletedProcess[str]:
    """The command as Claude Code runs it on a machine whose HOME is `home`, with no PATH at all."""
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(_synthetic(project, event, **SYNTHETIC_FIELDS[event])),
        capture_output=True,
        text=True,
        env={"HOME": str(home), "GATE_HOME": os.environ["GATE_HOME"]},
        cwd=project,
        timeout=60,
    )


def test_committed_command_fails_open_where_gate_is_not_set_up(gate: Gate, project: Path, tmp_path: Path) -> None:
    """A teammate's machine: the project's committed settings, no gate there. Every hook exits 0 and prints nothing
    for the model; SessionStart alone answers a `systemMessage`, the one line Claude Code shows the user (and not
    the model) at session start, saying gate is not installed and where to read more."""
    install(gate, project)
    data = json.loads(settings_file(project).read_text())
    teammate = tmp_path / "teammate-home"
    teammate.mkdir()
    for spec in wiring.EVENTS:
        command = gate_groups(data)[spec.event][0]["hooks"][0]["command"]
        assert sys.executable not in command and str(Path.home()) not in command
        proc = _run_committed(command, project, teammate, spec.event)
        assert proc.returncode == 0, (spec.event, proc.stderr)
        assert proc.stderr == ""
        if spec.event != "SessionStart":
            assert proc.stdout == "", spec.event
            continue
        answer = json.loads(proc.stdout)
        assert list(answer) == ["systemMessage"]
        (line,) = answer["systemMessage"].splitlines()
        assert line == wiring.NOT_INSTALLED and "memory-gate not installed" in line and "README" in line


PROSE = re.compile(r"[A-Za-z]{2,} [A-Za-z]{2,} [A-Za-z]{2,}")  # three words in a row: a sentence, not a command


def test_committed_commands_are_short_and_hold_no_prose(gate: Gate, project: Path) -> None:
    """After a `decision: block` the CLI also showed the model "Stop hook blocking error from command: "<command>"":
    a command that said "memory-gate … is not set up on this machine" told the model gate was absent while gate
    blocked it. Every command is short and says nothing; SessionStart's adds only the teammate's line, a few words
    in a `systemMessage` (shown to the user, never to the model)."""
    install(gate, project)
    text = settings_file(project).read_text()
    data = json.loads(text)
    for spec in wiring.EVENTS:
        command = gate_groups(data)[spec.event][0]["hooks"][0]["command"]
        if spec.event == "SessionStart":
            echo = f"""echo '{{"systemMessage":"{wiring.NOT_INSTALLED}"}}'; """
            assert echo in command and command.replace(echo, "") == wiring.PORTABLE_COMMAND
            assert len(wiring.NOT_INSTALLED) <= 70 and "\n" not in wiring.NOT_INSTALLED, wiring.NOT_INSTALLED
            command = command.replace(echo, "")
        assert len(command) <= 120, (spec.event, len(command))
        assert not PROSE.search(command), command
        assert "not set up" not in command and "install" not in command
    # the file a teammate reviews in a PR (with six prose lines: 4,000; 2,300 before PreToolUse's matcher took in
    # the MCP tools that write, a regular expression of ~230 characters: wiring.MCP_CHANGE_MATCHER)
    assert len(text) <= 2300 + len(wiring.MCP_CHANGE_MATCHER), len(text)


def test_install_migrates_the_commands_an_earlier_gate_committed(gate: Gate, project: Path) -> None:
    """A project whose committed settings hold an earlier gate's portable command (one prose line in every
    event): `gate install` replaces each with the current one, `gate uninstall` takes them out exactly, and both
    are recognised as gate's."""
    for earlier in sorted(wiring.EARLIER_PORTABLE):
        groups = wiring.desired_groups(dict.fromkeys(wiring.EVENT_NAMES, earlier))
        old = json.loads(RICH)
        for event, group in groups.items():
            old["hooks"].setdefault(event, []).append(group)
        path = write(settings_file(project), json.dumps(old, indent=2) + "\n")
        assert len(wiring.find_gate_entries(old)) == len(wiring.EVENTS)
        code, out, _ = install(gate, project)
        assert code == 0 and "wired" in out, out
        data = json.loads(path.read_text())
        assert_wired(data)
        assert earlier not in path.read_text().replace("\\", "")
        kept = {"hooks", "permissions"}  # gate's groups replaced; its allow rules added
        assert {k: v for k, v in data.items() if k not in kept} == {k: v for k, v in old.items() if k not in kept}
        assert [g for g in data["hooks"]["UserPromptSubmit"] if not gate_groups({"hooks": {"x": [g]}})["x"]] == (
            json.loads(RICH)["hooks"]["UserPromptSubmit"])
        write(settings_file(project), json.dumps(old, indent=2) + "\n")
        assert uninstall(gate, project)[0] == 0
        assert json.loads(path.read_text()) == json.loads(RICH)


def test_committed_command_fails_open_when_the_launcher_interpreter_is_gone(
    gate: Gate, project: Path, tmp_path: Path
) -> None:
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    install(gate, project, "--python", str(python))
    data = json.loads(settings_file(project).read_text())
    python.unlink()  # the venv deleted since
    for spec in wiring.EVENTS:
        command = gate_groups(data)[spec.event][0]["hooks"][0]["command"]
        proc = _run_committed(command, project, Path.home(), spec.event)
        assert proc.returncode == 0, (spec.event, proc.stderr)
        (line,) = proc.stderr.splitlines()  # for --debug, with the path
        assert str(python) in line and "does not exist" in line and "gate install" in line
        if spec.event != "SessionStart":
            assert proc.stdout == "", spec.event
            continue
        # at session start, one line Claude Code shows the user (its stderr only --debug shows)
        assert json.loads(proc.stdout) == {"systemMessage": launcher.GONE}
        assert "moved or deleted" in launcher.GONE and "gate install" in launcher.GONE


def _write_whole_event(command: str, home: Path, project: Path, size: int) -> tuple[int, str, str | None]:
    """Write an event of `size` bytes to the command as Claude Code does, whole, then close: (exit status,
    stderr, the writer's error). A command that exits without reading leaves the writer a broken pipe once the
    event is larger than the pipe's buffer (64 KiB on Linux)."""
    event = json.dumps({**_synthetic(project, "UserPromptSubmit"), "prompt": "x" * size}).encode()
    proc = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=project,
                            env={"HOME": str(home), "GATE_HOME": os.environ["GATE_HOME"]})
    assert proc.stdin is not None and proc.stderr is not None and proc.stdout is not None
    problem = None
    try:
        proc.stdin.write(event)
        proc.stdin.close()
    except BrokenPipeError as error:
        problem = f"broken pipe: {error}"
    err = proc.stderr.read().decode()
    proc.stdout.read()
    return proc.wait(timeout=60), err, problem


def test_committed_command_reads_a_large_event_whole_where_gate_is_not_set_up(
    gate: Gate, project: Path, tmp_path: Path
) -> None:
    """A teammate without gate: the committed command drains the event before it exits, so Claude Code's write
    of a 1 MB event (a long pasted prompt) does not end in a broken pipe. Small events fit the pipe's buffer and
    could not tell."""
    install(gate, project)
    command = gate_groups(json.loads(settings_file(project).read_text()))["UserPromptSubmit"][0]["hooks"][0]["command"]
    teammate = tmp_path / "teammate-home"
    teammate.mkdir()
    code, err, problem = _write_whole_event(command, teammate, project, 1 << 20)
    assert problem is None and code == 0 and err == "", err


def test_launcher_reads_a_large_event_whole_when_its_interpreter_is_gone(
    gate: Gate, project: Path, tmp_path: Path
) -> None:
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(sys.executable)
    install(gate, project, "--python", str(python))
    command = gate_groups(json.loads(settings_file(project).read_text()))["UserPromptSubmit"][0]["hooks"][0]["command"]
    python.unlink()
    code, err, problem = _write_whole_event(command, Path.home(), project, 1 << 20)
    assert problem is None and code == 0, err
    assert "does not exist" in err


def test_launcher_only_writes_no_settings(gate: Gate, project: Path) -> None:
    code, out, _ = gate("install", "--launcher-only")
    assert code == 0 and str(launcher.path()) in out
    assert launcher.interpreter() == sys.executable
    assert not (project / ".claude").exists()
    code, out, _ = gate("install", "--launcher-only")
    assert code == 0 and "nothing changed" in out


def test_gate_console_script_installs_with_no_path(project: Path, tmp_path: Path) -> None:
    """The `gate` entry point itself needs no PATH either (install.sh and CI call it by absolute path)."""
    script = Path(sys.executable).parent / "gate"
    env = {"HOME": os.environ["HOME"], "GATE_HOME": os.environ["GATE_HOME"]}
    proc = subprocess.run(
        [str(script), "install", "--project", str(project)], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(settings_file(project).read_text())
    python = launcher.interpreter()
    assert python is not None and Path(python).parent == Path(sys.executable).parent  # the venv's own python
    assert_wired(data, python=python)


# --- the plugin -------------------------------------------------------------------------------------------------


def test_the_mcp_part_of_the_pretooluse_matcher_is_the_rules_change_tools(tmp_path: Path) -> None:
    """rules/triggers.toml says the matcher is built from [search_first] change_tools: the MCP calls the
    search-first check counts as a change are the ones the hook is given (one list, not two kept alike)."""
    rules = tmp_path / "rules"
    shutil.copytree(REPO / "rules", rules)
    triggers = rules / "triggers.toml"
    text = triggers.read_text()
    shipped = tomllib.loads(text)["search_first"]["change_tools"]
    assert "|".join(shipped) == wiring.MCP_CHANGE_MATCHER and wiring.TOOL_MATCHER.endswith(wiring.MCP_CHANGE_MATCHER)
    line = next(line for line in text.splitlines() if line.strip().startswith("'^mcp__"))  # the one shipped
    triggers.write_text(text.replace(line, "  '^mcp__.+?__frobnicate', '^mcp__x__y$',", 1))
    out = subprocess.run([sys.executable, "-c", "from gate.install import wiring; print(wiring.TOOL_MATCHER)"],
                         env={**os.environ, "GATE_RULES_DIR": str(rules)}, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out.endswith("|^mcp__.+?__frobnicate|^mcp__x__y$") and "upload" not in out


def test_plugin_hooks_match_the_installed_wiring() -> None:
    """Both front doors wire the same events, matchers and timeouts."""
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    assert list(hooks) == list(wiring.EVENT_NAMES)
    for spec in wiring.EVENTS:
        (group,) = hooks[spec.event]
        assert group.get("matcher") == spec.matcher
        (entry,) = group["hooks"]
        assert entry == {
            "type": "command",
            "command": '/bin/sh "${CLAUDE_PLUGIN_ROOT}/hooks/run"',
            "timeout": spec.timeout,
        }


def test_plugin_manifests_agree_with_the_package() -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    plugin = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert plugin["name"] == "memory-gate" and plugin["version"] == version
    (entry,) = market["plugins"]
    assert entry["name"] == plugin["name"] and entry["source"] == "./" and entry["version"] == version


def _launcher(root: Path, data: Path, env: dict[str, str], event: dict[str, Any]) -> subprocess.CompletedProcess:
    full = {"HOME": os.environ["HOME"], "GATE_HOME": os.environ["GATE_HOME"], "PATH": "/usr/bin:/bin", **env}
    full.update(CLAUDE_PLUGIN_ROOT=str(root), CLAUDE_PLUGIN_DATA=str(data))
    return subprocess.run(
        ["/bin/sh", str(REPO / "hooks" / "run")],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env=full,
        timeout=60,
    )


def test_launcher_fails_open_and_says_so_once_while_not_ready(project: Path, tmp_path: Path) -> None:
    data = tmp_path / "plugin-data"
    (data / "setup.lock").mkdir(parents=True)  # a setup already running: the launcher must not start another
    event = _synthetic(project, "UserPromptSubmit", prompt="hello there")
    first = _launcher(REPO, data, {}, event)
    assert first.returncode == 0 and first.stdout == ""
    second = _launcher(REPO, data, {}, event)
    assert second.returncode == 0 and second.stdout == ""
    # The lock is busy, so this run starts nothing; the notice belongs to whoever took the lock.
    (data / "setup.lock").rmdir()
    (data / "setup.failed").touch()  # a failed setup is retried later, not on every prompt
    third = _launcher(REPO, data, {}, event)
    assert third.returncode == 0 and third.stdout == "" and not (data / "venv").exists()


def test_launcher_notice_is_logged_once(project: Path, tmp_path: Path) -> None:
    data = tmp_path / "plugin-data"
    tools = tmp_path / "tools-but-no-python"
    tools.mkdir()
    for name in ("cat", "date", "dirname", "find", "mkdir", "rm", "sed", "uname"):
        found = next(Path(d) / name for d in ("/usr/bin", "/bin") if (Path(d) / name).exists())
        (tools / name).symlink_to(found)
    # No python on PATH and GATE_PYTHON unset: setup cannot start, which is said once per setup attempt.
    env = {"PATH": str(tools)}
    event = _synthetic(project, "UserPromptSubmit", prompt="hello there")
    runs = [_launcher(tmp_path / "root-without-python", data, env, event) for _ in range(2)]
    assert all(run.returncode == 0 and run.stdout == "" for run in runs)
    log = Path(error_log_file()).read_text().splitlines()
    assert sum("first use" in line for line in log) == 1
    assert "memory-gate plugin" in runs[0].stderr


def test_launcher_runs_the_hook_when_ready(
    project: Path, tmp_path: Path, gate: Callable[..., tuple[int, str, str]]
) -> None:
    # a standing directive: a SessionStart hook that ran answers with it, one that did not prints nothing
    code, out, err = gate("remember", "Run the payments suite before every push", "--kind", "directive", "--json")
    assert code == 0, err
    directive = json.loads(out)["id"]
    data = tmp_path / "plugin-data"
    bin_dir = data / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    # A stand-in for the venv's python: this test environment's interpreter (which has gate installed).
    shim = bin_dir / "python"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    shim.chmod(0o755)
    (data / "venv" / ".gate-ready").write_text(f"{REPO}\n")

    def started(session: str, proc: subprocess.CompletedProcess) -> None:
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout, f"no answer: the launcher did not run the hook ({proc.stderr!r})"
        context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
        assert directive in context
        audit = [json.loads(line) for line in Path(audit_log_file()).read_text().splitlines()]
        (record,) = [r for r in audit if r.get("session") == session]
        assert (record["event"], record["decision"], record["delivered"]) == ("SessionStart", "fired", [directive])

    event = {**_synthetic(project, "SessionStart", source="startup"), "session_id": "launcher-venv"}
    started("launcher-venv", _launcher(REPO, data, {}, event))
    # GATE_PYTHON wins over everything (an environment managed by hand).
    event = {**event, "session_id": "launcher-gate-python"}
    proc = _launcher(REPO, tmp_path / "elsewhere", {"GATE_PYTHON": sys.executable}, event)
    started("launcher-gate-python", proc)
    assert not (tmp_path / "elsewhere").exists()


# --- the plugin through the real CLI: marketplace add, install, first-use setup, recall ----------------------


def _claude_binary() -> Path:
    """The pinned CLI: $GATE_CLAUDE_BIN (CI exports it), else scripts/install-claude-cli.sh. Never skipped."""
    explicit = os.environ.get("GATE_CLAUDE_BIN", "").strip()
    if explicit:
        return Path(explicit)
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "install-claude-cli.sh")],
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        pytest.fail(f"the Claude Code CLI is not available: {proc.stderr[-2000:]}", pytrace=False)
    return Path(proc.stdout.strip().splitlines()[-1])


def _marketplace_copy(target: Path) -> Path:
    """The repo as a clone of this work tree would have it (files git does not ignore): no .venv, no caches."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.mark.e2e
def test_plugin_marketplace_install_sets_itself_up_and_recalls(gate: Gate, project: Path, tmp_path: Path) -> None:
    """`claude plugin marketplace add` + `claude plugin install … --scope project`, then sessions: the first
    runs while the plugin builds its environment (hooks fail open, said once), later ones recall."""
    sys.path.insert(0, str(REPO / "tests" / "e2e"))
    from claude_harness import offline_env
    from model_server import ModelServer, Reply

    claude = str(_claude_binary())
    market = _marketplace_copy(tmp_path / "market")
    home = Path(os.environ["HOME"])
    memory = "The reserve account waterfall triggers at 30 days overdue"
    code, out, _ = gate("remember", memory, "--kind", "decision", "--json")
    memory_id = json.loads(out)["id"]

    with ModelServer(default=Reply.text("OK.")) as server:
        env = offline_env(home, server, {"GATE_HOME": os.environ["GATE_HOME"]})

        def cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [claude, *args],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )

        for args in (
            ("plugin", "validate", str(market)),
            ("plugin", "marketplace", "add", str(market)),
            ("plugin", "install", "memory-gate@memory-gate", "--scope", "project"),
        ):
            proc = cli(*args)
            assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        enabled = json.loads((project / ".claude" / "settings.json").read_text())["enabledPlugins"]
        assert enabled == {"memory-gate@memory-gate": True}

        prompt = "How does the reserve account waterfall trigger work?"
        first = cli("-p", prompt, "--output-format", "json")
        assert first.returncode == 0, first.stderr
        assert memory_id not in json.dumps(server.main_requests()), "recalled before the environment existed"
        notices = [line for line in Path(error_log_file()).read_text().splitlines() if "PluginNotReady" in line]
        assert len(notices) == 1, notices

        data = home / ".claude" / "plugins" / "data" / "memory-gate-memory-gate"
        deadline = time.monotonic() + 600
        while not (data / "venv" / ".gate-ready").exists():
            setup_log = data / "setup.log"
            assert time.monotonic() < deadline, setup_log.read_text() if setup_log.exists() else "no setup.log"
            assert not (data / "setup.failed").exists(), setup_log.read_text()
            time.sleep(2)

        mark = server.mark()
        second = cli("-p", prompt, "--output-format", "json")
        assert second.returncode == 0, second.stderr
        shown = json.dumps(server.bodies_since(mark))
        assert "MEMORY SEARCH REQUIRED" in shown and memory_id in shown
        notices = [line for line in Path(error_log_file()).read_text().splitlines() if "PluginNotReady" in line]
        assert len(notices) == 1, "the not-ready notice is said once"

    code, out, _ = gate("doctor", "--json")
    report = json.loads(out)
    assert code == 0, [c for c in report["checks"] if c["status"] == "fail"]
    assert [c["status"] for c in report["checks"] if c["check"] == "plugin"] == ["ok"]
    runs = [c for c in report["checks"] if c["check"] == "hooks"]
    assert {c["details"]["event"] for c in runs} == set(wiring.EVENT_NAMES)
    assert all(c["status"] == "ok" for c in runs), runs


# --- install.sh: the README's first command ----------------------------------------------------------------------


def _install_sh_env(home: Path, path_first: str | None = None) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p != bin_dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GATE_", "PIP_", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), GATE_HOME=os.environ["GATE_HOME"], PATH=path, PIP_NO_INDEX="1")
    if path_first:
        env["PATH"] = path_first + os.pathsep + env["PATH"]
    return env


def _install_sh(*args: str, cwd: Path, home: Path, path_first: str | None = None) -> subprocess.CompletedProcess[str]:
    """install.sh as a newcomer runs it: a HOME of their own, the venv not on PATH, pip kept off the network
    (install.sh skips pip when .venv already holds gate from this checkout: run ./install.sh once after
    pyproject.toml changes)."""
    import hashlib

    stamp = REPO / ".venv" / ".gate-installed"
    digest = hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()
    assert stamp.is_file() and stamp.read_text().strip() == f"{REPO} {digest}", (
        "pyproject.toml changed since .venv was set up (or install.sh never ran here): run ./install.sh"
    )
    return subprocess.run(
        ["bash", str(REPO / "install.sh"), *args], cwd=cwd, env=_install_sh_env(home, path_first),
        capture_output=True, text=True, timeout=600,
    )


def _checkout_status() -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout


def test_install_sh_in_the_checkout_wires_nothing_and_says_how(tmp_path: Path) -> None:
    before = _checkout_status()
    proc = _install_sh(cwd=REPO, home=tmp_path)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert (
        not (REPO / ".claude" / "settings.json").exists()
        or "memory-gate" not in (REPO / ".claude" / "settings.json").read_text()
    )
    assert _checkout_status() == before  # the checkout is left as it was
    assert "./install.sh ~/path/to/your/project" in proc.stdout and "gate demo" in proc.stdout
    # gate is set up all the same: this machine's launcher runs the checkout's venv
    assert launcher.interpreter(tmp_path / launcher.RELATIVE) == str(REPO / ".venv" / "bin" / "python")


def test_install_sh_refuses_the_checkout_when_named(tmp_path: Path) -> None:
    before = _checkout_status()
    proc = _install_sh(".", cwd=REPO, home=tmp_path)
    assert proc.returncode == 1 and "memory-gate's own checkout" in proc.stderr
    assert _checkout_status() == before


def test_install_sh_wires_the_project_it_is_run_in(tmp_path: Path, project: Path) -> None:
    home = tmp_path / "newcomer"
    home.mkdir()
    proc = _install_sh(cwd=project, home=home)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    commands = {e.command for e in wiring.find_gate_entries(json.loads(settings_file(project).read_text()))}
    assert commands == {wiring.PORTABLE_COMMAND, wiring.PORTABLE_SESSION_START}
    assert launcher.interpreter(home / launcher.RELATIVE) == str(REPO / ".venv" / "bin" / "python")
    assert "all good" in proc.stdout  # its gate doctor: a fresh install is clean


def test_install_sh_agent_codex_wires_the_projects_codex_hooks_and_nothing_of_claude_code(
    tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "newcomer"
    home.mkdir()
    proc = _install_sh(str(project), "--agent", "codex", cwd=tmp_path, home=home)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())
    assert all("--agent codex" in e.command for e in wiring.find_gate_entries(hooks))
    assert len(wiring.find_gate_entries(hooks)) == 6  # SubagentStart too
    assert not settings_file(project).exists()
    assert (home / ".codex" / "rules" / "memory-gate.rules").is_file()
    assert "Codex runs gate's hooks only after you have reviewed them once" in proc.stdout
    refused = _install_sh(str(project), "--agent", "codex", "--scope", "local", cwd=tmp_path, home=home)
    assert refused.returncode == 1 and "Codex has no local scope" in refused.stderr


def test_install_sh_agent_gemini_wires_the_projects_gemini_settings_and_nothing_of_claude_code(
    tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "newcomer"
    home.mkdir()
    proc = _install_sh(str(project), "--agent", "gemini", cwd=tmp_path, home=home)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    settings = json.loads((project / ".gemini" / "settings.json").read_text())
    entries = wiring.find_gate_entries(settings)
    assert all("--agent gemini" in e.command for e in entries)
    assert sorted(e.event for e in entries) == ["AfterAgent", "AfterTool", "BeforeAgent", "BeforeTool", "SessionStart"]
    assert not settings_file(project).exists()
    assert (home / ".gemini" / "policies" / "memory-gate.toml").is_file()
    assert "Gemini has no event after it compresses" in proc.stdout  # its doctor says what Gemini cannot do
    refused = _install_sh(str(project), "--agent", "gemini", "--scope", "local", cwd=tmp_path, home=home)
    assert refused.returncode == 1 and "Gemini has no local scope" in refused.stderr


def test_install_sh_in_the_home_directory_wires_no_project(tmp_path: Path) -> None:
    """Run from the home directory with no argument, install.sh wired ~/.claude/settings.json, the user settings
    every project reads, and called it project scope. It sets gate up and wires nothing; `gate install` refuses
    the home directory as a project."""
    home = tmp_path / "newcomer"
    home.mkdir()
    proc = _install_sh(cwd=home, home=home)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert not (home / ".claude" / "settings.json").exists()
    assert "no project wired (run in your home directory" in proc.stdout
    assert "./install.sh ~/path/to/your/project" in proc.stdout
    proc = _install_sh(str(home), cwd=home, home=home)
    assert proc.returncode == 1 and "is your home directory" in proc.stderr and "--scope user" in proc.stderr
    assert not (home / ".claude" / "settings.json").exists()


def test_gate_install_refuses_the_home_directory_as_a_project(gate: Gate) -> None:
    code, out, err = gate("install", "--project", str(Path.home()))
    assert code != 0 and "is your user settings" in err and "hint:" in err
    assert not (Path.home() / ".claude" / "settings.json").exists()
    code, out, err = gate("install", "--project", str(Path.home()), "--scope", "user")
    assert code == 0 and (Path.home() / ".claude" / "settings.json").exists()


def test_install_sh_re_run_says_nothing_new(tmp_path: Path, project: Path) -> None:
    """A second run changes nothing, so it says so: no "linked" and no note to commit the file again, and its
    closing hint names the project (a bare `gate doctor` run in the checkout suggested wiring the checkout)."""
    home = tmp_path / "newcomer"
    (home / ".local" / "bin").mkdir(parents=True)
    local_bin = str(home / ".local" / "bin")
    first = _install_sh(str(project), cwd=REPO, home=home, path_first=local_bin)
    assert first.returncode == 0, first.stderr + first.stdout
    assert "linked " in first.stdout and "note: commit settings.json" in first.stderr
    second = _install_sh(str(project), cwd=REPO, home=home, path_first=local_bin)
    assert second.returncode == 0, second.stderr + second.stdout
    assert "linked " not in second.stdout and "note: commit" not in second.stderr
    assert f"gate is on PATH: {local_bin}/gate" in second.stdout
    (check,) = [line for line in (second.stdout + second.stderr).splitlines() if "check it with" in line]
    assert check.endswith(f"doctor --project {project}"), check


def test_install_sh_interrupted_in_its_doctor_step_says_so(tmp_path: Path, project: Path) -> None:
    """Ctrl-C while gate doctor runs printed "gate doctor found a problem (above)" with nothing above. The doctor
    process is held (a sitecustomize that waits in `gate doctor`) until the test has sent SIGINT; not the hook it
    runs: the hook command runs python -I -S, which reads no sitecustomize and no PYTHONPATH."""
    import signal

    home = tmp_path / "newcomer"
    home.mkdir()
    hold = tmp_path / "hold"
    hold.mkdir()
    started = tmp_path / "doctor-hook-started"
    (hold / "sitecustomize.py").write_text(
        "import sys, time\n"
        "if sys.argv[1:2] == ['doctor']:\n"
        f"    open({str(started)!r}, 'w').close()\n"
        "    time.sleep(120)\n"
    )
    env = {**_install_sh_env(home), "PYTHONPATH": str(hold)}
    proc = subprocess.Popen(["bash", str(REPO / "install.sh"), str(project)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "doctor never ran a hook"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole foreground group
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, out + err
    assert "found a problem" not in err
    assert "interrupted while checking with gate doctor (the hooks are wired)" in err
    assert f"doctor --project {project}" in err or "run ./install.sh again" in err
