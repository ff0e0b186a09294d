"""Path globs of memories and their triggers (hot path: standard library only), relative to the project root.

`*` and `?` stay inside one path segment, `**` spans any number of segments (also none: `src/db/**` matches src/db
itself), `[abc]` is a class, and a glob without wildcards names a file or a whole directory. Trigger specs
(gate/memory/cues/triggers.py) and a memory's `paths` both use them; the anchors match them against the files a tool
call touches (gate/gates/delivery/anchors.py).
"""

from __future__ import annotations

from gate.literals import compile_cached
from gate.memo import cache  # functools.cache without functools (gate/memo.py)

TYPE_CHECKING = False  # annotations are strings; re is imported only to type them
if TYPE_CHECKING:
    import re

_SPECIAL = frozenset("()[]{}?*+-|^$\\.&~# \t\n\r\v\f")  # the characters re.escape escapes


def _escape(ch: str) -> str:
    """re.escape(ch), without importing `re` for it."""
    return "\\" + ch if ch in _SPECIAL else ch


@cache
def _drive() -> re.Pattern[str]:
    """Compiled on first use (from a kept program, gate/literals.py): a hook that never normalizes a glob never
    pays for it."""
    return compile_cached(r"^[A-Za-z]:/")


def normalize_glob(glob: str) -> str:
    """The canonical form of a path glob, or ValueError: relative, '/'-separated, no '.' or '..' segments."""
    text = glob.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    if not text:
        raise ValueError("empty")
    if text.startswith("/") or _drive().match(text):
        raise ValueError("absolute; write it relative to the project root")
    if "{" in text or "}" in text:
        raise ValueError("braces are not supported; write one --on per alternative")
    directory = text.endswith("/")
    segments = [s for s in text.split("/") if s and s != "."]
    if any(s == ".." for s in segments):
        raise ValueError("leaves the project ('..')")
    collapsed: list[str] = []
    for segment in segments:
        if segment == "**" and collapsed and collapsed[-1] == "**":
            continue
        collapsed.append(segment)
    if directory and collapsed[-1] != "**":
        collapsed.append("**")
    return "/".join(collapsed)


def _has_magic(segment: str) -> bool:
    return any(ch in segment for ch in "*?[")


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "*":
            while i + 1 < len(segment) and segment[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = segment.find("]", i + 2 if segment[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end == -1:
                out.append(_escape(ch))
            else:
                body = segment[i + 1 : end]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                body = body.replace("\\", "\\\\").replace("/", "")
                out.append(("[^/" if negate else "[") + body + "]")
                i = end
        else:
            out.append(_escape(ch))
        i += 1
    return "".join(out)


def glob_regex(glob: str) -> str:
    """A regex (for fullmatch) over '/'-separated relative paths, for a normalized glob.

    A glob without wildcards matches that path and everything beneath it (a file, or a whole directory)."""
    segments = glob.split("/")
    if not any(_has_magic(s) for s in segments):
        segments.append("**")
    body = ""
    last = len(segments) - 1
    for i, segment in enumerate(segments):
        if segment == "**":
            if last == 0:
                body = ".*"
            elif i == 0:
                body += "(?:[^/]+/)*"
            elif i == last:
                body += "(?:/[^/]+)*"
            else:
                body += "/(?:[^/]+/)*"
            continue
        if i > 0 and segments[i - 1] != "**":
            body += "/"
        body += _segment_regex(segment)
    return body


def static_dir(glob: str) -> str:
    """The leading literal segments of a normalized glob ('' when it starts with a wildcard)."""
    literal: list[str] = []
    for segment in glob.split("/"):
        if _has_magic(segment):
            break
        literal.append(segment)
    return "/".join(literal)


def could_contain(glob: str, directory: str) -> bool:
    """Whether some path inside `directory` (or the directory itself) can match `glob`."""
    gsegs = glob.split("/")
    if not any(_has_magic(s) for s in gsegs):
        gsegs.append("**")
    dsegs = directory.split("/") if directory else []
    import re  # (a directory walked for a glob: rare on the hook path)

    compiled = [None if s == "**" else re.compile(_segment_regex(s)) for s in gsegs]

    def walk(gi: int, di: int) -> bool:
        if di == len(dsegs):
            return True
        if gi == len(compiled):
            return False
        pattern = compiled[gi]
        if pattern is None:
            return walk(gi + 1, di) or walk(gi, di + 1)
        return bool(pattern.fullmatch(dsegs[di])) and walk(gi + 1, di + 1)

    return walk(0, 0)
