"""gate/memory/index/engine.py: tantivy loads without running datetime.py, and `datetime` still works as before."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = r"""
import json, pickle, sys
from gate.memory.index.engine import tantivy
import datetime
from datetime import UTC, date, datetime as dt, timedelta, timezone
now = dt.now(UTC)
back = pickle.loads(pickle.dumps(now))
schema = tantivy.SchemaBuilder().add_text_field("t", stored=True).add_date_field("d", stored=True).build()
index = tantivy.Index(schema)
writer = index.writer(15_000_000, 1)
writer.add_document(tantivy.Document(t="hello", d=dt(2026, 1, 2, tzinfo=UTC)))
writer.commit()
index.reload()
searcher = index.searcher()
hit = searcher.doc(searcher.search(index.parse_query("hello", ["t"]), 1).hits[0][1])
print(json.dumps({
    "stand_in": datetime is sys.modules.get("_datetime"),
    "python_module_ran": str(getattr(datetime, "__file__", "")).endswith(".py"),
    "roundtrip": back == now,
    "timezone": (dt(2026, 1, 2, tzinfo=timezone(timedelta(hours=2))) - dt(2026, 1, 2, tzinfo=UTC)).total_seconds(),
    "date_field": str(hit["d"][0].date()) if isinstance(hit["d"][0], dt) else repr(hit["d"][0]),
    "today": isinstance(date.today(), date),
}))
"""


def _probe(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_tantivy_loads_with_the_c_datetime_and_datetime_works_as_before() -> None:
    probe = _probe(PROBE)
    assert probe["stand_in"] and not probe["python_module_ran"], probe
    assert probe["roundtrip"] and probe["today"], probe
    assert probe["timezone"] == -7200.0, probe
    assert probe["date_field"] == "2026-01-02", probe


def test_a_datetime_imported_before_is_left_as_it_is() -> None:
    probe = _probe("import datetime\n" + PROBE)
    assert not probe["stand_in"] and probe["python_module_ran"], probe
    assert probe["roundtrip"] and probe["date_field"] == "2026-01-02", probe
