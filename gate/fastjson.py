"""json.loads / json.dumps for the hooks, without importing the json package (hot path, standard library only).

`import json` costs a hook process more than most of its work: the package's three modules, `re` (and `enum`,
`functools`, `collections` with it) and six regexes it compiles as it loads. What json.loads and json.dumps run
with their default arguments is the C accelerator `_json` (its scanner and its encoder); this module builds
those two exactly as json's JSONDecoder and JSONEncoder do and calls them the same way, so every value, every
string and every byte out is json's own (tests/test_fastjson.py holds that). A text that is not one JSON document
goes to json.loads itself, whose error is raised (the C scanner raises its errors only with json loaded).
Anything beyond the defaults below (indent, sort_keys, hooks) is the json package's job.
"""

from __future__ import annotations

import _json

TYPE_CHECKING = False  # typing costs the hook milliseconds to import; annotations are strings anyway
if TYPE_CHECKING:
    from typing import IO, Any


class _Decoding:
    """What json.JSONDecoder() hands the C scanner: its defaults (parse_constant as json's _CONSTANTS)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


_scan = _json.make_scanner(_Decoding())
_SPACE = " \t\n\r"  # json.decoder.WHITESPACE


def _json_loads(s: str) -> Any:
    """json.loads itself: for a text that is not one JSON document, whose error json raises (its C scanner
    raises its errors only once json.decoder is loaded)."""
    import json

    return json.loads(s)


def _skip_space(s: str, at: int) -> int:
    end = len(s)
    while at < end and s[at] in _SPACE:
        at += 1
    return at


def _encoding(b: bytes | bytearray) -> str:
    """json.detect_encoding."""
    if b.startswith((b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00")):
        return "utf-32"
    if b.startswith((b"\xfe\xff", b"\xff\xfe")):
        return "utf-16"
    if b.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if len(b) >= 4:
        if not b[0]:
            return "utf-16-be" if b[1] else "utf-32-be"
        if not b[1]:
            return "utf-16-le" if b[2] or b[3] else "utf-32-le"
    elif len(b) == 2:
        if not b[0]:
            return "utf-16-be"
        if not b[1]:
            return "utf-16-le"
    return "utf-8"


def loads(s: str | bytes | bytearray) -> Any:
    """json.loads(s)."""
    if isinstance(s, str):
        if s.startswith("\ufeff"):
            return _json_loads(s)  # json's error
    elif isinstance(s, bytes | bytearray):
        s = s.decode(_encoding(s), "surrogatepass")
    else:
        raise TypeError(f"the JSON object must be str, bytes or bytearray, not {s.__class__.__name__}")
    try:
        obj, end = _scan(s, _skip_space(s, 0))
    except Exception:  # StopIteration where no value starts, SystemError for the errors json.decoder would name
        return _json_loads(s)
    if _skip_space(s, end) != len(s):
        return _json_loads(s)  # "Extra data"
    return obj


def loads_or(s: str, default: Any) -> Any:
    """json.loads(s), or `default` for a text that is not one JSON document: what a reader that skips such lines
    (a transcript's torn last line) needs, without loading json to name the error."""
    if s.startswith("\ufeff"):
        return default
    try:
        obj, end = _scan(s, _skip_space(s, 0))
    except Exception:  # StopIteration, SystemError, RecursionError: no document here
        return default
    return obj if _skip_space(s, end) == len(s) else default


def load(handle: IO[str]) -> Any:
    """json.load(handle)."""
    return loads(handle.read())


def _default(o: Any) -> Any:
    """json.JSONEncoder.default."""
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def dumps(obj: Any, *, ensure_ascii: bool = True, separators: tuple[str, str] | None = None) -> str:
    """json.dumps(obj, ensure_ascii=..., separators=...)."""
    quote = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    if isinstance(obj, str):
        return quote(obj)
    item, key = separators if separators is not None else (", ", ": ")
    # json.JSONEncoder.iterencode(_one_shot=True): markers for check_circular, no indent, sort_keys and skipkeys
    # off, allow_nan on
    encode = _json.make_encoder({}, _default, quote, None, key, item, False, False, True)
    return "".join(encode(obj, 0))
