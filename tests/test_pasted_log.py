"""A pasted log or traceback is searched by its error lines, not by every token (issue 29)."""

from __future__ import annotations

from pathlib import Path

from test_hooks import audit, event

from gate.memory.model import Memory
from gate.memory.store.store import Store
from gate.pasted import searchable
from gate.rules import load_rules

TRACEBACK = """the importer crashes again, can you look
Traceback (most recent call last):
  File "/srv/app/importer/run.py", line 88, in main
    rows = load(batch)
  File "/srv/app/importer/load.py", line 41, in load
    return parse_rows(handle)
  File "/srv/app/importer/parse.py", line 17, in parse_rows
    raise ValueError(f"bad header {header!r}")
ValueError: bad header 'amount;currency'
2026-03-02 10:14:55 INFO worker pool drained
2026-03-02 10:14:55 INFO shutting down scheduler heartbeat
"""

LINT = """fix these
/home/dev/shop/packages/storefront/src/cart/basket.ts
  12:5   error  Expected { after 'if' condition  curly
  40:9   error  Unexpected console statement  no-console
/home/dev/shop/packages/storefront/src/cart/coupon.ts
  7:1    warning  Missing JSDoc comment  require-jsdoc
  19:3   error  'total' is never reassigned. Use 'const' instead  prefer-const
  23:3   error  Expected { after 'if' condition  curly
✖ 5 problems (4 errors, 1 warning)
"""

PLAIN = "\n".join(f"step {n}: rename the invoice field and update its tests" for n in range(1, 12))


def test_a_traceback_is_searched_by_the_users_words_and_its_error_lines() -> None:
    text = searchable(TRACEBACK, load_rules("text"))
    assert "the importer crashes again" in text
    assert "ValueError: bad header" in text
    for frame_word in ("heartbeat", "parse_rows(handle)", "rows = load(batch)", "run.py"):
        assert frame_word not in text


def test_lint_output_keeps_its_errors_and_drops_the_file_lines() -> None:
    text = searchable(LINT, load_rules("text"))
    assert "fix these" in text and "Expected { after 'if' condition" in text
    assert "/home/dev/shop" not in text and "Missing JSDoc" not in text


def test_a_long_prompt_that_is_no_log_is_searched_whole() -> None:
    assert searchable(PLAIN, load_rules("text")) == PLAIN
    short = "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: no"
    assert searchable(short, load_rules("text")) == short  # too short to be a pasted log worth cutting
    assert searchable(TRACEBACK, {"pasted_log": {"enabled": False}}) == TRACEBACK


def test_the_recall_gate_searches_a_pasted_traceback_by_its_error(project: Path, hook) -> None:
    store = Store.for_cwd(str(project))
    store.remember(Memory(id="m-header", kind="gotcha", title="Bank CSV exports use 'amount;currency' headers",
                          body="The importer expects commas; ValueError bad header means a semicolon export"))
    store.remember(Memory(id="m-heartbeat", kind="finding",
                          title="The scheduler heartbeat drains the worker pool on shutdown"))
    for number in range(6):
        store.remember(Memory(id=f"m-filler-{number}", kind="finding", title=f"Filler fact {number} about docs"))
    out, code = hook(event(project, "UserPromptSubmit", prompt=TRACEBACK))
    assert code == 0
    record = audit()[-1]
    assert "m-heartbeat" not in record.get("delivered", [])
    assert "heartbeat" not in record["query"]["prompt"] and "header" in record["query"]["prompt"]
