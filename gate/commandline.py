"""What a Bash command line does, as far as the search the agent must run needs to know (hot path: stdlib only).

Two questions: which gate subcommands it runs (`gate search`, `gate show`: the agent's own search), and whether
it could change something. A line changes nothing only when every simple command in it is one that only reads
(rules/triggers.toml [search_first] read_only and read_only_subcommands, without a flag that makes it write) and
no output goes to a file. Anything the reader cannot tell — an unclosed quote, a command substitution — counts as
a change: the cost of a wrong "changes" is one refusal in a turn, the cost of a wrong "reads" a change made
before the search.
"""

from __future__ import annotations

from gate.shellwords import WRAPPERS, is_assignment, split_words

TYPE_CHECKING = False  # typing costs the hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

SEPARATORS = frozenset({";", "&", "&&", "||", "|", "|&", ";;", "\n", "(", ")", "{", "}", "!"})
HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
MAX_CHARS = 8_000  # a heredoc of a whole file must not stall the hook: past this, a line counts as a change


class CommandLine:
    """The reading of one command line: the gate subcommands it runs, and whether it could change something."""

    __slots__ = ("changes", "gate_subcommands")

    def __init__(self, changes: bool, gate_subcommands: list[str]) -> None:
        self.changes = changes
        self.gate_subcommands = gate_subcommands


def _words(command: str) -> list[str] | None:
    """The line's words, operators apart (newlines too: they end a command as `;` does); None when unreadable (an
    unclosed quote). `#` inside a word (a URL's fragment) is no comment; a real comment is judged as words."""
    return split_words(command)


def _gate_subcommand(words: list[str]) -> str | None:
    """`gate SUB …`, `/path/to/gate SUB …`, `python -m gate.cli SUB …`: SUB; else None."""
    head = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    if head.startswith("python") and rest[:2] == ["-m", "gate.cli"]:
        rest = rest[2:]
    elif head not in ("gate", "gate.exe"):
        return None
    return next((word for word in rest if not word.startswith("-")), "")


def _writes(args: list[str], flags: list[str]) -> bool:
    """Whether a flag that makes a reading command write is given: `-i` also inside a cluster (`-ni`, `-i.bak`),
    a longer one as itself or with its value (`--in-place=.bak`, `-delete`)."""
    for flag in flags:
        if len(flag) == 2 and flag[0] == "-" and flag[1] != "-":
            if any(arg[:1] == "-" and arg[1:2] != "-" and flag[1] in arg[1:] for arg in args):
                return True
        elif any(arg == flag or arg.startswith(flag + "=") for arg in args):
            return True
    return False


def _reads_only(words: list[str], rules: dict[str, Any]) -> bool:
    head = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if _writes(args, rules.get("writing_flags", {}).get(head, ())):
        return False
    if head in rules.get("read_only", ()):
        return True
    allowed = rules.get("read_only_subcommands", {}).get(head)
    if allowed is None:
        return False
    valued = rules.get("options_with_values", {}).get(head, ())
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in valued:
            skip = True
        elif not arg.startswith("-"):
            return arg in allowed
    return not args  # `git` alone prints its usage


def read_command(command: str, rules: dict[str, Any]) -> CommandLine:
    """Read a Bash command line by the rules of rules/triggers.toml [search_first]."""
    # A command substitution ($(…) or backticks, quoted or not) runs anything: a change, whatever is around it.
    if len(command) > MAX_CHARS or "`" in command or "$(" in command:
        return CommandLine(True, [])
    words = _words(command)
    if words is None:
        return CommandLine(True, [])
    changes = False
    subcommands: list[str] = []
    current: list[str] = []
    simple: list[list[str]] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in SEPARATORS:
            simple.append(current)
            current = []
        elif word and set(word) <= set("<>&|"):  # a redirection
            target = words[index + 1] if index + 1 < len(words) else ""
            if ">" in word and not (word == ">&" and target.isdigit()) and target not in HARMLESS_TARGETS:
                changes = True  # output into a file
            index += 1  # its target is not an argument
        else:
            current.append(word)
        index += 1
    simple.append(current)
    for words_of in simple:
        while words_of and (is_assignment(words_of[0]) or words_of[0] in WRAPPERS):
            words_of = words_of[1:]
        if not words_of:
            continue
        subcommand = _gate_subcommand(words_of)
        if subcommand is not None:
            subcommands.append(subcommand)  # gate's own commands never count as a change (the agent is told to
            continue  # run them: a `gate remember` a reminder asks for first must not be refused)
        if not _reads_only(words_of, rules):
            changes = True
    return CommandLine(changes, subcommands)
