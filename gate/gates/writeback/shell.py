"""Which program a Bash command line runs, as the write-back gate compares a failed run with a later one.

`cd web && npm test` runs npm: the directory change, an environment assignment, a `source` or an `export` before
the program only set it up. The line is split on its operators as written (no shell parsing: the Stop hook does
not import shlex, which brings `re`); a quoted `&&` splits too, which at worst names a later word as the program.
"""

from __future__ import annotations

# The words that only set up the command after them (rules/writeback.toml [signals] setup_commands overrides).
SETUP_COMMANDS = ("cd", "pushd", "popd", "source", ".", "export", "set", "unset", "ulimit", "nvm", "alias")
_SEPARATORS = ("&&", "||", ";", "|", "\n")


def _simple_commands(command: str) -> list[str]:
    parts = [command]
    for separator in _SEPARATORS:
        parts = [piece for part in parts for piece in part.split(separator)]
    return [part.strip() for part in parts if part.strip()]


def _is_assignment(word: str) -> bool:
    name, equals, _ = word.partition("=")
    return bool(equals) and name.isidentifier()


def main_command(command: str, setup: tuple[str, ...] | list[str] = SETUP_COMMANDS) -> str:
    """The first simple command of the line that is not set-up, without its assignments: `cd web && npm test` →
    `npm test`; the line itself when it is all set-up (`cd web`)."""
    for part in _simple_commands(command):
        words = part.split()
        while words and _is_assignment(words[0]):
            words = words[1:]
        if words and words[0] not in setup:
            return " ".join(words)
    return command.strip()


def program(command: str, setup: tuple[str, ...] | list[str] = SETUP_COMMANDS) -> str:
    """The program a command line runs, without its directory: `cd web && /usr/bin/npm test` → `npm`."""
    words = main_command(command, setup).split()
    return words[0].rsplit("/", 1)[-1] if words else ""
