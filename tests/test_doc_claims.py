"""Sentences of the README and docs/ that promise a behaviour, each held by a test (issue #32, item 5).

Each test quotes the sentence it holds; when the behaviour changes, the sentence changes with it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from support import stop_verdict

REPO = Path(__file__).resolve().parent.parent


def _rule_seen(project: Path) -> int:
    """fire.max_per_prompt as a fresh process reads it (the rules loader caches per process)."""
    code = (
        "import sys; from gate.rules import load_rules; "
        "print(load_rules('recall', sys.argv[1])['fire']['max_per_prompt'])"
    )
    out = subprocess.run([sys.executable, "-c", code, str(project)], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def test_per_user_rules_live_in_the_config_dir_gate_home_moves(project: Path, isolated_home: Path) -> None:
    """docs/configuration.md: "Override any of them per user in `<config dir>/rules/NAME.toml` (… `$GATE_HOME/config`
    when `GATE_HOME` is set, and then `~/.config/memory-gate/rules/` is not read)"."""
    assert "`$GATE_HOME/config` when `GATE_HOME` is\nset, and then `~/.config/memory-gate/rules/` is not read" in (
        REPO / "docs" / "configuration.md"
    ).read_text()
    platform = Path.home() / ".config" / "memory-gate" / "rules"
    platform.mkdir(parents=True)
    (platform / "recall.toml").write_text("[fire]\nmax_per_prompt = 7\n")
    assert _rule_seen(project) == 3  # gate's own: the platform directory is not read under GATE_HOME
    relocated = isolated_home / "config" / "rules"
    relocated.mkdir(parents=True)
    (relocated / "recall.toml").write_text("[fire]\nmax_per_prompt = 2\n")
    assert _rule_seen(project) == 2


def test_recall_doc_names_only_functions_that_exist() -> None:
    """docs/recall.md, "For other callers": every `recall.NAME(` it documents is defined in the recall gate."""
    doc = (REPO / "docs" / "recall.md").read_text()
    section = doc.split("## 5. For other callers", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`recall\.(\w+)\(", section))
    assert named, "the section names no function"
    defined = set()
    for path in (REPO / "gate").rglob("recall*.py"):
        defined |= set(re.findall(r"^def (\w+)\(", path.read_text(), re.MULTILINE))
    for path in (REPO / "gate").rglob("recall/*.py"):
        defined |= set(re.findall(r"^def (\w+)\(", path.read_text(), re.MULTILINE))
    assert named <= defined, f"documented but gone: {sorted(named - defined)}"


def test_readme_does_not_promise_never_twice_in_a_row() -> None:
    """The README said a turn is held "never twice in a row"; consecutive turns may each be held (each is a turn
    of its own: tests/test_hooks.py::test_cap_holds_over_twenty_consequential_turns). What holds is that the Stop
    right after a block goes through (test_stop_hook_active_never_blocks_and_records_outcome, and below)."""
    readme = (REPO / "README.md").read_text()
    assert "twice in a row" not in readme
    assert "the agent's answer to a block is never held" in readme


def test_the_answer_to_a_block_is_never_held(project: Path, tmp_path: Path, hook) -> None:
    """README: "the agent's answer to a block is never held" — even an answer that ignores the block and does
    more consequential work."""
    sys.path.insert(0, str(Path(__file__).parent / "data"))
    from cli_transcript import fixed_bug_turn

    transcript = tmp_path / "t.jsonl"
    transcript.write_text(fixed_bug_turn(str(project)).text())
    base = {"session_id": "s1", "cwd": str(project), "hook_event_name": "Stop", "transcript_path": str(transcript)}
    out, _ = hook({**base, "stop_hook_active": False})
    assert stop_verdict(out) is not None
    out, code = hook({**base, "stop_hook_active": True, "last_assistant_message": "Also fixed the second bug."})
    assert (out, code) == ("", 0)


def test_readme_says_what_uninstall_removes() -> None:
    """README: uninstall removes gate's hook entries, and the settings file and `.claude/` when gate created
    them (held by tests/test_install.py::test_uninstall_removes_a_file_gate_created); it used to say "and
    nothing else"."""
    readme = (REPO / "README.md").read_text()
    assert "and nothing else" not in readme
    assert "the file and its `.claude/` directory too when gate created them" in readme


def test_the_docs_say_where_the_repository_is_without_inventing_a_host() -> None:
    """No page said where memory-gate's repository is. It has no host the docs could name for certain, so they
    say so, and how to find the address of a checkout (and give it to a teammate)."""
    for page in ("README.md", "docs/install.md"):
        text = (REPO / page).read_text()
        assert "`git remote get-url origin`" in text, page
        assert not re.search(r"https?://(?:www\.)?(?:github|gitlab|bitbucket)\.", text), page
