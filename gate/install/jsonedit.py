"""Edit a JSON document as text, touching only the bytes of what is added or removed.

Re-serialising a user's settings file would reformat everything gate did not add (inline arrays expanded,
escapes changed); editing spans instead keeps every other byte, so `gate uninstall` gives back the file
exactly as it was before `gate install` whenever nobody else edited it in between. An append copies the
separator the container already uses and a removal deletes exactly that separator again, which is what makes
the round trip byte-exact.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_WS = " \t\r\n"
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


class JSONSyntaxError(ValueError):
    """The text is not strict JSON (the dialect Claude Code reads); carries a line and column."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"{message} (line {line}, column {column})")
        self.line = line
        self.column = column


@dataclass
class Node:
    """A JSON value and where it sits in the text: [start, end)."""

    kind: str  # "object" | "array" | "scalar"
    start: int
    end: int
    value: Any = None
    keys: list[str] = field(default_factory=list)  # object member keys, in order
    key_starts: list[int] = field(default_factory=list)  # where each member's key string starts
    children: list[Node] = field(default_factory=list)  # member values (object) or items (array)

    def child_start(self, index: int) -> int:
        """Where a child begins in the text: the key for an object member, the value for an array item."""
        return self.key_starts[index] if self.kind == "object" else self.children[index].start

    def member(self, key: str) -> Node | None:
        """The value of `key` (the last one, as JSON.parse keeps the last of duplicate keys)."""
        for index in range(len(self.keys) - 1, -1, -1):
            if self.keys[index] == key:
                return self.children[index]
        return None

    def member_index(self, key: str) -> int:
        for index in range(len(self.keys) - 1, -1, -1):
            if self.keys[index] == key:
                return index
        raise KeyError(key)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads_strict(text: str) -> Any:
    """Parse like JSON.parse: no NaN/Infinity; errors carry line and column."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise JSONSyntaxError(error.msg, error.lineno, error.colno) from None
    except ValueError as error:
        raise JSONSyntaxError(str(error), 1, 1) from None


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _WS:
            self.pos += 1

    def string_end(self, start: int) -> int:
        pos = start + 1
        while True:
            char = self.text[pos]
            if char == "\\":
                pos += 2
            elif char == '"':
                return pos + 1
            else:
                pos += 1

    def value(self) -> Node:
        self.skip()
        start = self.pos
        char = self.text[start]
        if char == "{":
            node = Node("object", start, start)
            self.pos += 1
            self.skip()
            if self.text[self.pos] == "}":
                self.pos += 1
            else:
                while True:
                    self.skip()
                    key_start = self.pos
                    key_end = self.string_end(key_start)
                    node.keys.append(json.loads(self.text[key_start:key_end]))
                    node.key_starts.append(key_start)
                    self.pos = key_end
                    self.skip()
                    self.pos += 1  # ':'
                    node.children.append(self.value())
                    self.skip()
                    closing = self.text[self.pos]
                    self.pos += 1
                    if closing == "}":
                        break
            node.end = self.pos
            return node
        if char == "[":
            node = Node("array", start, start)
            self.pos += 1
            self.skip()
            if self.text[self.pos] == "]":
                self.pos += 1
            else:
                while True:
                    node.children.append(self.value())
                    self.skip()
                    closing = self.text[self.pos]
                    self.pos += 1
                    if closing == "]":
                        break
            node.end = self.pos
            return node
        if char == '"':
            end = self.string_end(start)
        else:
            match = _SCALAR.match(self.text, start)
            assert match is not None  # the text was validated by loads_strict first
            end = match.end()
        self.pos = end
        return Node("scalar", start, end, value=json.loads(self.text[start:end]))


def parse(text: str) -> Node:
    """The span tree of a document (validated strictly first, so the span parser can trust the syntax)."""
    loads_strict(text)
    return _Parser(text).value()


# --- formatting helpers -------------------------------------------------------------------------------------


def line_indent(text: str, pos: int) -> str:
    """The leading whitespace of the line that contains `pos`."""
    line_start = text.rfind("\n", 0, pos) + 1
    end = line_start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[line_start:end]


def detect_indent_unit(text: str, root: Node) -> str:
    """One level of indentation as the file uses it (Claude Code writes two spaces)."""
    if root.kind in ("object", "array") and root.children:
        first = root.child_start(0)
        if "\n" in text[root.start : first]:
            outer = line_indent(text, root.start)
            inner = line_indent(text, first)
            if inner.startswith(outer) and len(inner) > len(outer):
                return inner[len(outer) :]
    return "  "


def render(value: Any, base: str, unit: str, multiline: bool) -> str:
    """`value` as JSON text that starts at indentation `base` (the first line carries no indent itself)."""
    if not multiline:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    text = json.dumps(value, ensure_ascii=False, indent=unit)
    return text.replace("\n", "\n" + base)


def _separator_before_last(text: str, container: Node) -> str:
    """The whitespace that sits between the comma (or opening bracket) and the container's last child."""
    count = len(container.children)
    last_start = container.child_start(count - 1)
    if count == 1:
        return text[container.start + 1 : last_start]
    comma = text.index(",", container.children[count - 2].end)
    return text[comma + 1 : last_start]


def is_compact(text: str) -> bool:
    """A document written on one line (trailing whitespace aside): additions stay on that line too."""
    return "\n" not in text.strip()


def append_child(text: str, container: Node, value: Any, unit: str, key: str | None = None) -> str:
    """Add `value` (as member `key` of an object, or as an array item) after the container's last child."""
    member_prefix = "" if key is None else json.dumps(key, ensure_ascii=False) + ": "
    if container.children:
        separator = _separator_before_last(text, container)
        last = container.children[-1]
        if "\n" in separator:
            base = separator[separator.rfind("\n") + 1 :]
            multiline = True
        else:
            # Children share lines (`[1, 2]`, or `}, {` style): stay on one line unless items span lines.
            last_start = container.child_start(len(container.children) - 1)
            multiline = "\n" in text[last_start : last.end]
            base = line_indent(text, last_start)
            separator = separator or " "
        insertion = "," + separator + member_prefix + render(value, base, unit, multiline)
        return text[: last.end] + insertion + text[last.end :]
    if is_compact(text):
        return text[: container.start + 1] + member_prefix + render(value, "", unit, False) + text[container.end - 1 :]
    outer = line_indent(text, container.start)
    inner = outer + unit
    body = "\n" + inner + member_prefix + render(value, inner, unit, True) + "\n" + outer
    return text[: container.start + 1] + body + text[container.end - 1 :]


def remove_child(text: str, container: Node, index: int) -> str:
    """Delete one child with the separator that joins it to its neighbours (the inverse of append_child)."""
    count = len(container.children)
    if count == 1:
        return text[: container.start + 1] + text[container.end - 1 :]
    if index > 0:
        return text[: container.children[index - 1].end] + text[container.children[index].end :]
    return text[: container.child_start(0)] + text[container.child_start(1) :]
