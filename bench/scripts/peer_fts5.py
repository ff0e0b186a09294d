"""Peer baseline: the recall job done with sqlite3 FTS5 and bm25, as a whole process per prompt (like a hook).

    python peer_fts5.py DB < event.json

Open the database, run one bm25-ranked query over the prompt's terms (title weighted like gate's boost),
print the hits as a UserPromptSubmit additionalContext object.
"""

from __future__ import annotations

import json
import sqlite3
import sys

from _terms import terms

LIMIT = 5


def main(argv: list[str]) -> int:
    event = json.load(sys.stdin)
    words = terms(event.get("prompt", ""))
    if not words:
        return 0
    # Quoted terms: a raw prompt is never handed to the FTS5 query parser.
    match = " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
    conn = sqlite3.connect(f"file:{argv[1]}?mode=ro", uri=True)
    rows = conn.execute(
        "SELECT id, kind, title, bm25(mem, 0.0, 0.0, 10.0, 1.0, 2.0) AS score FROM mem "
        "WHERE mem MATCH ? ORDER BY score LIMIT ?",
        (match, LIMIT),
    ).fetchall()
    conn.close()
    if not rows:
        return 0
    lines = [f"{mem_id} · {kind} · {title}" for mem_id, kind, title, _ in rows]
    context = "MEMORY SEARCH REQUIRED: topic shift.\n" + "\n".join(lines)
    answer = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}}
    sys.stdout.write(json.dumps(answer, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
