"""Reading a Bash command line for the search the agent must run (gate/commandline.py): which gate subcommands
it runs, and whether it could change something, by the shipped rules (rules/triggers.toml [search_first])."""

from __future__ import annotations

import pytest

from gate.commandline import read_command
from gate.rules import load_rules


@pytest.fixture(scope="module")
def rules() -> dict:
    return load_rules("triggers", None)["search_first"]


@pytest.mark.parametrize("command", [
    "ls -la",
    "cat src/app.py | head -50",
    "git status && git diff HEAD~1 -- src/",
    "git -C ../other log --oneline -5",
    "grep -rn 'a > b' src/ 2>/dev/null | wc -l",
    "cd src; ls\npwd",
    "find . -name '*.py' -newer setup.cfg",
    "sed -n '1,40p' gate/hook.py",
    "rg TODO > /dev/null 2>&1 && echo found",
    "FOO=1 env LANG=C sort data.txt | uniq -c",
    "(cd docs && ls)",
    "echo 'a # not a comment' | tr a b",
    "git",  # its usage
])
def test_lines_that_only_read(command: str, rules: dict) -> None:
    line = read_command(command, rules)
    assert not line.changes, command
    assert line.gate_subcommands == []


@pytest.mark.parametrize("command", [
    "rm -rf build",
    "echo hi > notes.txt",
    "cat a >> b",
    "ls && rm x",
    "ls\nrm x",
    "sed -i 's/a/b/' f.py",
    "sed -ni.bak 's/a/b/p' f.py",
    "sed --in-place=.bak 's/a/b/' f.py",
    "find . -name '*.pyc' -delete",
    "find . -exec rm {} +",
    "git commit -m 'x'",
    "git checkout -- file",
    "python -m pytest -q",
    "npm install",
    "ls $(rm x)",
    'echo "$(touch y)"',
    "echo `date`",
    "cat <<EOF > out.txt\nhello\nEOF",
    "echo 'unclosed",
    "sort -o out.txt in.txt",
    "sudo ls",
    "find . | xargs rm",
    "ls &> out.txt",
    "ls >| out.txt",
    "ls &>> out.txt",
    # past MAX_CHARS (8,000): a line of commands that only read, counted as a change for its length alone
    "cat " + " ".join(f"src/billing/module_{n:04d}.py" for n in range(400)) + " | grep -n reserve | head -50",
])
def test_lines_that_change_something(command: str, rules: dict) -> None:
    assert read_command(command, rules).changes, command


@pytest.mark.parametrize("operator", ["&>", ">|", "&>>", ">", ">>", "2>", "1>>"])
def test_every_redirection_into_a_file_is_a_change(operator: str, rules: dict) -> None:
    """`&>` (both streams), `>|` (past noclobber), `&>>` write a file as `>` does; into /dev/null they do not."""
    assert read_command(f"ls -la {operator} out.txt", rules).changes, operator
    assert read_command(f"ls -la {operator}out.txt", rules).changes, operator
    assert not read_command(f"ls -la {operator} /dev/null", rules).changes, operator


def test_a_read_only_line_past_max_chars_is_a_change(rules: dict) -> None:
    """Past MAX_CHARS a line is not read (a heredoc of a whole file must not stall the hook): it counts as a
    change, even made of commands that only read — the same commands in a shorter line do read only."""
    from gate.commandline import MAX_CHARS

    files = [f"src/billing/module_{n:04d}.py" for n in range(400)]
    long_line = "cat " + " ".join(files) + " | grep -n reserve | head -50"
    assert len(long_line) > MAX_CHARS
    assert read_command(long_line, rules).changes
    short_line = "cat " + " ".join(files[:40]) + " | grep -n reserve | head -50"
    assert len(short_line) < MAX_CHARS and not read_command(short_line, rules).changes


@pytest.mark.parametrize(("command", "subcommands"), [
    ("gate search invoice rounding", ["search"]),
    ("/opt/tools/.venv/bin/gate search 'reserve account' --limit 3", ["search"]),
    ("'/path with space/gate' show m-123", ["show"]),
    ("python3 -m gate.cli search billing", ["search"]),
    ("cd /repo && gate search x && gate show m-1", ["search", "show"]),
    ("gate remember 'a fact' --kind fix", ["remember"]),
    ("gate --help", [""]),
    ("mygate search x", []),
    ("echo gate search x", []),
])
def test_gate_subcommands(command: str, subcommands: list[str], rules: dict) -> None:
    line = read_command(command, rules)
    assert line.gate_subcommands == subcommands
    if subcommands:
        assert not line.changes, "gate's own commands never count as a change"


# --- the words, as shlex reads them (gate/shellwords.py split_words is shlex ported, to keep `re` out of the hook)


def _shlex_words(command: str) -> list[str] | None:
    import shlex

    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return None


def test_split_words_is_shlex_on_fuzzed_lines() -> None:
    import random

    from gate.shellwords import split_words

    chance = random.Random(29)
    alphabet = "ab '\"\\;&|()<>\n\t\r$#=-x1 "
    lines = ["", " ", "''", '""', "a\\", "'open", 'a "b\\"c" d', "a\\ b", "x>&2", "a&&(b)||c;;d\n\ne"]
    lines += ["".join(chance.choice(alphabet) for _ in range(chance.randint(0, 24))) for _ in range(20_000)]
    wrong = [(line, _shlex_words(line), split_words(line)) for line in lines if split_words(line) != _shlex_words(line)]
    assert not wrong, wrong[:5]


def test_split_words_is_shlex_on_the_corpus_commands() -> None:
    """Every Bash command of the corpus's sessions, Codex CLI shell calls included (skipped where
    ../shared/corpora is absent)."""
    from corpus_files import entries, transcripts

    from gate.shellwords import split_words

    files = transcripts()
    if not files:
        pytest.skip("the corpus is not at ../shared/corpora")
    commands = set()
    for path in files:
        for entry in entries(path):
            content = entry.get("message", {}).get("content") if isinstance(entry.get("message"), dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("name") == "Bash":
                    command = (block.get("input") or {}).get("command")
                    if isinstance(command, str):
                        commands.add(command)
    assert len(commands) > 10_000, len(commands)
    wrong = [c for c in commands if split_words(c) != _shlex_words(c)]
    assert not wrong, wrong[:3]
