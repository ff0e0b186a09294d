"""gate/fastjson.py gives what json.loads and json.dumps give, values and errors alike, and a hook process that
uses it does not import the json package."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import pytest

from gate import fastjson

VALUES = [
    {}, [], "", 0, -1, 2**70, 1.5, -0.0, 1e300, 5e-324, float("inf"), float("-inf"), True, False, None,
    "plain", "é and 中文", "lone \ud800 surrogate", "\u2028\u2029\x00\x1f\"\\/", "\U0001f600",
    {"a": [1, 2.5, None, {"b": {"c": []}}], "é": "ü", "": ""},
    [{"nested": [[["deep"]]]}, 3, "x"],
    {7: "int key", 2.5: "float key", False: "bool key", None: "none key"},
    ("a", "tuple"),
]
DOCUMENTS = [
    '{"a": 1}', " [1, 2] \n", '"x"', "1e5", "-Infinity", "Infinity", "12.50", '{"a": "\\ud800"}', '"\\u00e9"',
    "\ufeff{}", '{"a": 1} x', "", "   ", '{"a":', "[1,]", "{'a': 1}", '{"a" : [ 1 , 2 ] }\t\r\n', "nul", "[1 2]",
    '"unterminated', '{"a": 1}{"b": 2}', "\n\n", '"tab\there"',
]
BYTES = [
    b'{"a": 1}', b'\xef\xbb\xbf{"a": 1}', '{"a": "é"}'.encode("utf-16"), '{"a": 1}'.encode("utf-16-le"),
    '{"a": 1}'.encode("utf-16-be"), '{"a": 1}'.encode("utf-32"), '[1]'.encode("utf-32-le"), b'{"\xff": 1}', b"12",
    b"\x001", bytearray(b"[true]"), b"",
]


def _outcome(call, *args, **kwargs):
    try:
        return "ok", call(*args, **kwargs)
    except Exception as error:  # the same error, with the same message and position
        return "error", type(error), str(error), getattr(error, "pos", None)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return repr(a) == repr(b)


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
@pytest.mark.parametrize("options", [
    {}, {"separators": (",", ":")}, {"ensure_ascii": False}, {"ensure_ascii": False, "separators": (",", ":")},
])
def test_dumps_is_json_dumps(value, options) -> None:
    assert fastjson.dumps(value, **options) == json.dumps(value, **options)


def test_dumps_refuses_what_json_refuses() -> None:
    circular: list = []
    circular.append(circular)
    for bad in (object(), {1j: 2}, circular, {"a": {1, 2}}):
        assert repr(_outcome(fastjson.dumps, bad)) == repr(_outcome(json.dumps, bad))


@pytest.mark.parametrize("document", DOCUMENTS + BYTES, ids=range(len(DOCUMENTS + BYTES)))
def test_loads_is_json_loads(document) -> None:
    mine, theirs = _outcome(fastjson.loads, document), _outcome(json.loads, document)
    assert mine[0] == theirs[0], (mine, theirs)
    if mine[0] == "ok":
        assert _same(mine[1], theirs[1]), (mine, theirs)
    else:
        assert mine[1:] == theirs[1:], (mine, theirs)


def test_loads_refuses_what_is_no_text() -> None:
    assert repr(_outcome(fastjson.loads, 12)) == repr(_outcome(json.loads, 12))


def test_random_values_round_trip_as_json_does() -> None:
    rng = random.Random(31)
    alphabet = ["a", "Z", " ", "\n", '"', "\\", "é", "中", "\ud800", "\x7f", "\U0001f600", "\t"]

    def value(depth: int):
        pick = rng.randrange(8 if depth < 4 else 5)
        if pick == 0:
            return rng.randint(-(10**20), 10**20)
        if pick == 1:
            return rng.uniform(-1e6, 1e6)
        if pick == 2:
            return "".join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
        if pick == 3:
            return rng.choice([True, False, None])
        if pick == 4:
            return rng.random() * 10 ** rng.randint(-300, 300)
        if pick in (5, 6):
            return {"".join(rng.choice(alphabet) for _ in range(3)): value(depth + 1) for _ in range(rng.randrange(4))}
        return [value(depth + 1) for _ in range(rng.randrange(4))]

    for _ in range(300):
        item = value(0)
        for options in ({}, {"separators": (",", ":")}, {"ensure_ascii": False}):
            text = json.dumps(item, **options)
            assert fastjson.dumps(item, **options) == text
            assert repr(fastjson.loads(text)) == repr(json.loads(text))
            assert repr(fastjson.loads(text.encode("utf-8", "surrogatepass"))) == repr(
                json.loads(text.encode("utf-8", "surrogatepass"))
            )


PROBE = """
import sys
from gate import fastjson
fastjson.loads(fastjson.dumps({"a": [1, "x"]}))
print("json" in sys.modules)
for text in ('{"a": 1', '{"a" 1}', '[1,]', '{"a": 1} x'):  # errors the C scanner raises only with json loaded
    try:
        fastjson.loads(text)
    except ValueError as error:
        print(type(error).__name__, error)
"""


def test_a_process_does_not_import_json_until_a_text_is_no_json_and_then_raises_its_error() -> None:
    done = subprocess.run([sys.executable, "-I", "-S", "-c", f"import sys; sys.path[:0] = {sys.path!r}\n{PROBE}"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "False"
    expected = []
    for text in ('{"a": 1', '{"a" 1}', '[1,]', '{"a": 1} x'):
        try:
            json.loads(text)
        except ValueError as error:
            expected.append(f"{type(error).__name__} {error}")
    assert lines[1:] == expected


@pytest.mark.parametrize("document", [d for d in DOCUMENTS if isinstance(d, str)])
def test_loads_or_is_json_loads_or_the_default(document) -> None:
    marker = object()
    theirs = _outcome(json.loads, document)
    mine = fastjson.loads_or(document, marker)
    if theirs[0] == "ok":
        assert _same(mine, theirs[1]), (mine, theirs)
    else:
        assert mine is marker, (mine, theirs)


LOADS_OR_PROBE = """
import sys
from gate import fastjson
print([fastjson.loads_or(t, None) for t in ('{"a": 1', '[1,]', '{"a": 1} x', '\\ufeff{}', '[' * 100000)])
print("json" in sys.modules)
"""


def test_loads_or_never_imports_json() -> None:
    """A transcript's torn last line is skipped without loading json (~5 ms) to name its error."""
    done = subprocess.run([sys.executable, "-I", "-S", "-c",
                           f"import sys; sys.path[:0] = {sys.path!r}\n{LOADS_OR_PROBE}"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[None, None, None, None, None]", "False"]
