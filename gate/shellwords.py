"""Which program a Bash command line runs (hot path: no imports), as the write-back gate compares a failed run with a
later one; gate/commandline.py, which parses a line fully for the search the agent must run, shares its words.

`cd web && npm test` runs npm: the directory change, an environment assignment, a `source` or an `export` before
the program only set it up. The line is split on its operators as written (no shell parsing: the Stop hook does
not import shlex, which brings `re`); a quoted `&&` splits too, which at worst names a later word as the program.
`split_words` is the full reader of a line's words (shlex's, without its imports) that gate/commandline.py uses.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs a hook ~3 ms to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import Any

# Words that run the command after them (`env FOO=1 ls`, `time pytest`): the command that follows is the one.
WRAPPERS = frozenset({"env", "time", "command", "builtin", "nice", "nohup"})
# The words that only set up the command after them (rules/writeback.toml [signals] setup_commands overrides).
SETUP_COMMANDS = ("cd", "pushd", "popd", "source", ".", "export", "set", "unset", "ulimit", "nvm", "alias")
_SEPARATORS = ("&&", "||", ";", "|", "\n")


def _simple_commands(command: str) -> list[str]:
    parts = [command]
    for separator in _SEPARATORS:
        parts = [piece for part in parts for piece in part.split(separator)]
    return [part.strip() for part in parts if part.strip()]


def is_assignment(word: str) -> bool:
    """`NAME=value` before a command: an environment assignment, not the program."""
    name, equals, _ = word.partition("=")
    return bool(equals) and name.isidentifier()


def main_command(command: str, setup: tuple[str, ...] | list[str] = SETUP_COMMANDS) -> str:
    """The first simple command of the line that is not set-up, without its assignments and wrappers:
    `cd web && time npm test` → `npm test`; the line itself when it is all set-up (`cd web`)."""
    for part in _simple_commands(command):
        words = part.split()
        while words and (is_assignment(words[0]) or words[0] in WRAPPERS):
            words = words[1:]
        if words and words[0] not in setup:
            return " ".join(words)
    return command.strip()


def program(command: str, setup: tuple[str, ...] | list[str] = SETUP_COMMANDS) -> str:
    """The program a command line runs, without its directory: `cd web && /usr/bin/npm test` → `npm`."""
    words = main_command(command, setup).split()
    return words[0].rsplit("/", 1)[-1] if words else ""


def setup_commands(rules: Any) -> tuple[str, ...] | list[str]:
    """The set-up words of the write-back rules ([signals] setup_commands), or the shipped ones when a hand-edited
    file lacks them or holds something else."""
    section = rules.get("signals") if isinstance(rules, dict) else None
    words = section.get("setup_commands") if isinstance(section, dict) else None
    return words if isinstance(words, list) and all(isinstance(w, str) for w in words) else SETUP_COMMANDS


# --- a command line's words, as gate/commandline.py reads them -------------------------------------------------
# shlex.shlex(command, posix=True, punctuation_chars=OPERATOR_CHARS) with whitespace " \t\r", whitespace_split and
# no comments, ported to a function: importing shlex brings `re` (and enum, functools) into a hook that otherwise
# needs neither, ~5 ms a tool call while the agent's search is owed. tests/test_commandline.py holds the two to the
# same words on fuzzed lines and on the corpus's real commands.
OPERATOR_CHARS = ";&|()<>\n"
_BLANKS = " \t\r"
_QUOTES = "'\""


def split_words(command: str) -> list[str] | None:
    """The line's words, a run of operator characters as one word ("&&", ">&", "\\n"); quotes and escapes
    resolved as a POSIX shell does; None when a quote is never closed or the line ends in a backslash."""
    words: list[str] = []
    state: str | None = " "  # " " between words, "a" in a word, "c" in operators, a quote, or "\\" after one
    at, end = 0, len(command)
    pending = ""  # the character that ended a word of operators, read again for the next word
    while True:
        token, quoted, escaped_in = "", False, "a"
        while True:
            if pending:
                char, pending = pending, ""
            elif at < end:
                char, at = command[at], at + 1
            else:
                char = ""
            if state is None:
                token = ""
                break
            if state == " ":
                if not char:
                    state = None
                    break
                if char in _BLANKS:
                    if token or quoted:
                        break
                elif char == "\\":
                    escaped_in, state = "a", "\\"
                elif char in OPERATOR_CHARS:
                    token, state = char, "c"
                elif char in _QUOTES:
                    state = char
                else:
                    token, state = char, "a"
            elif state in _QUOTES:
                quoted = True
                if not char:
                    return None  # no closing quotation
                if char == state:
                    state = "a"
                elif char == "\\" and state == '"':
                    escaped_in, state = state, "\\"
                else:
                    token += char
            elif state == "\\":
                if not char:
                    return None  # no escaped character
                if escaped_in in _QUOTES and char not in ("\\", escaped_in):
                    token += "\\"  # inside double quotes a backslash escapes only itself and the quote
                token += char
                state = escaped_in
            else:  # "a" or "c"
                if not char:
                    state = None
                    break
                if char in _BLANKS:
                    state = " "
                    if token or quoted:
                        break
                elif state == "c":
                    if char in OPERATOR_CHARS:
                        token += char
                    else:
                        pending, state = char, " "
                        break
                elif char in _QUOTES:
                    state = char
                elif char == "\\":
                    escaped_in, state = "a", "\\"
                elif char not in OPERATOR_CHARS:
                    token += char
                else:
                    pending, state = char, " "
                    if token or quoted:
                        break
        if not token and not quoted:
            return words
        words.append(token)
