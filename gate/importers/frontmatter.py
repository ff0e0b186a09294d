"""YAML front matter of a Markdown file, read as Claude Code reads it (PyYAML's safe loader).

A file that starts with a `---` line has front matter up to the next `---` line. When the YAML does not parse,
Claude Code tries once more with the plain values that hold YAML's special characters quoted and leading tabs
made spaces (Claude writes `description: Use X: never Y` unquoted); so does this, except for a value that opens a
list or a table and never closes it (`[unclosed`), which is broken, not plain text. What still fails is an error.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

_OPEN = re.compile(r"---[ \t]*")
_PLAIN_VALUE = re.compile(r"^([a-zA-Z_-]+):\s+(\S.*)$")
_SPECIAL = re.compile(r"[:#{}\[\],&*?|<>=!%@`]")
_LEADING_TABS = re.compile(r"^\t+", re.MULTILINE)


class FrontMatterError(ValueError):
    """Front matter that cannot be read; the message says where."""


def split(text: str) -> tuple[dict[str, Any] | None, str]:
    """(front matter, body) of a file's text; (None, text) when it has no front matter."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or not _OPEN.fullmatch(lines[0]):
        return None, text
    for number, line in enumerate(lines[1:], start=1):
        if _OPEN.fullmatch(line):
            return parse("\n".join(lines[1:number])), "\n".join(lines[number + 1 :])
    raise FrontMatterError("opened on line 1 and never closed by a --- line")


def parse(block: str) -> dict[str, Any]:
    try:
        data = _load(block)
    except yaml.YAMLError as first:
        try:
            data = _load(_quoted(block))
        except yaml.YAMLError:
            raise FrontMatterError(f"not YAML: {_describe(first)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError(f"a YAML {type(data).__name__}, not a table of keys")
    return {str(key): value for key, value in data.items()}


def _load(block: str) -> Any:
    return yaml.load(block, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # a safe loader: no arbitrary objects


def _quoted(block: str) -> str:
    lines = []
    for line in _LEADING_TABS.sub(lambda m: "  " * len(m.group(0)), block).split("\n"):
        match = _PLAIN_VALUE.match(line)
        value = match.group(2) if match else ""
        quoted = (value[:1] in "\"'" and value[-1:] == value[:1]) or (value[:1], value[-1:]) == ("[", "]")
        # a value that opens a list or a table and never closes it is broken YAML, not text to quote: quoted,
        # `description: [unclosed` became a memory titled "[unclosed"
        unclosed = value[:1] != "" and value[:1] in "[{" and value.rstrip()[-1:] != {"[": "]", "{": "}"}[value[:1]]
        if match and not quoted and not unclosed and _SPECIAL.search(value):
            escaped = value.replace("\\", "\\\\").replace('"', '\\"')
            line = f'{match.group(1)}: "{escaped}"'
        lines.append(line)
    return "\n".join(lines)


def _describe(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    # +2: the mark counts from the line after the opening ---, from 0
    return f"{problem} (line {mark.line + 2})" if mark is not None else str(problem)
