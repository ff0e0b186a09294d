"""Peer baseline: a file-based memory hook. Scan every markdown memory file for the prompt's terms.

    python peer_scan.py DIR < event.json

This is how tools that keep memories as markdown files find them without an index: read each file, count
term occurrences (title lines count double), print the best few as additionalContext.
"""

from __future__ import annotations

import heapq
import json
import os
import sys

from _terms import terms

LIMIT = 5


def main(argv: list[str]) -> int:
    event = json.load(sys.stdin)
    words = terms(event.get("prompt", ""))
    if not words:
        return 0
    scored: list[tuple[int, str, str]] = []
    with os.scandir(argv[1]) as entries:
        for entry in entries:
            if not entry.name.endswith(".md"):
                continue
            with open(entry.path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
            lower = text.lower()
            score = sum(lower.count(word) for word in words)
            if not score:
                continue
            title = next((line[2:] for line in text.splitlines() if line.startswith("# ")), entry.name)
            score += sum(title.lower().count(word) for word in words)
            scored.append((score, entry.name[:-3], title))
    best = heapq.nlargest(LIMIT, scored)
    if not best:
        return 0
    context = "MEMORY SEARCH REQUIRED: topic shift.\n" + "\n".join(f"{i} · {t}" for _, i, t in best)
    answer = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}}
    sys.stdout.write(json.dumps(answer, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
