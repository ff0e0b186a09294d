"""Query sheets: every prompt of the delivery-labelled sessions, as the agent sees it, for annotators who play
the agent and write the `gate search` query it would run (issue 29, "Score agent-written queries").

    python scripts/corpus/query_sheets.py --root MIRROR --out DIR [--per-sheet 60] [--splits dev,test-added]
        [--skip-answered eval/annotations/queries/Q2/dev.jsonl]

For each split (eval/labels/{dev,test}/delivery.jsonl) it takes the transcripts its store lines name, and for
every user prompt of them (as `gate replay` sees them: gate.replay.timeline) writes one case with
- its id: the transcript's path relative to MIRROR and the 1-based line of the prompt (what
  `gate replay --queries` reads),
- the session's first prompt (cut), the last assistant text before the prompt (cut, its end kept), the prompt
  (cut).
Nothing else: no labels, no memory ids, no store content (only the store lines' transcript lists are read).
Under DIR (never inside the repository: the sheets hold other people's text) it writes SPLIT/sheet-NN.md and
beside each a blank answer file SPLIT/sheet-NN.answers.jsonl ({"transcript", "prompt", "query": ""} a line),
then DIR/READY with the sheet and case counts. --splits names the label folders (default: dev, test);
--skip-answered leaves out the prompts an annotator's answer file already has a query for (a store added
later: only its sessions' prompts are new).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from gate.replay.sandbox import session_start
from gate.replay.timeline import read_timeline
from gate.session.transcript import read_turn

FIRST_PROMPT_CHARS = 600
REPLY_CHARS = 1500
PROMPT_CHARS = 3000
SPLITS = ("dev", "test")
LABELS = Path(__file__).resolve().parents[2] / "eval" / "labels"

HEADER = """# Query sheet {split} {number:02d} ({cases} cases)

You are the coding agent in these sessions. At each prompt below you see what the agent sees: the session's
first prompt, the last thing you (the assistant) wrote before the prompt, and the prompt. Before acting on the
prompt you run one search of your project memory (earlier sessions' decisions, fixes, gotchas, preferences,
environment facts) in your own words: `gate search "<query>"`, 2 to 8 words of what the request needs.
Write it as the "query" of the case's line in {answers} (same transcript and prompt; keep every line, one
query each). Judge each case only by what it shows; do not look anything up.
"""


def _clip_head(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f" […{len(text) - limit} more chars]"


def _clip_tail(text: str, limit: int) -> str:
    """The end of a reply is what the next prompt answers: keep it."""
    text = text.strip()
    return text if len(text) <= limit else f"[…{len(text) - limit} chars before] " + text[-limit:]


def _clip_middle(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    return text[:head] + f" […{len(text) - limit} chars…] " + text[-(limit - head):]


def store_transcripts(labels: Path) -> list[str]:
    """The transcripts a delivery labels file's store lines name, in order (relative to the mirror)."""
    out: list[str] = []
    for line in labels.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        if isinstance(item, dict) and "store" in item:
            out += [t for t in item.get("transcripts", []) if t not in out]
    return out


def last_reply(path: str, end: int) -> str:
    """The last text the assistant wrote before the byte offset `end` (the prompt's start)."""
    turn = read_turn(path, None, end=end, previous_reply=True)
    if turn.assistant_texts:
        return turn.assistant_texts[-1]
    return turn.previous_reply


def session_cases(root: Path, rel: str) -> list[dict[str, object]]:
    path = str(root / rel)
    timeline = read_timeline(path)
    cases: list[dict[str, object]] = []
    first = ""
    for step in timeline.prompts():
        prompt = str(step.event.get("prompt", ""))
        if not cases:
            first = prompt
        reply = last_reply(path, step.end) if cases else ""
        cases.append({"transcript": rel, "prompt": step.line, "n": len(cases), "first": first,
                      "reply": reply, "text": prompt})
    return cases


def render(case: dict[str, object]) -> str:
    lines = [f"## {case['transcript']}#{case['prompt']}  (prompt {case['n']} of the session)", ""]
    if case["n"]:
        lines += ["SESSION'S FIRST PROMPT:", _clip_head(str(case["first"]), FIRST_PROMPT_CHARS), ""]
        lines += ["ASSISTANT'S LAST TEXT BEFORE THE PROMPT:",
                  _clip_tail(str(case["reply"]), REPLY_CHARS) or "(none)", ""]
    lines += ["PROMPT:", _clip_middle(str(case["text"]), PROMPT_CHARS), ""]
    return "\n".join(lines)


def sheets_of(sessions: list[list[dict[str, object]]], per_sheet: int) -> list[list[dict[str, object]]]:
    """Sessions in order, about per_sheet cases a sheet; a session is split only when it alone is longer."""
    sheets: list[list[dict[str, object]]] = []
    current: list[dict[str, object]] = []
    for cases in sessions:
        if current and len(current) + len(cases) > per_sheet * 5 // 4:
            sheets.append(current)
            current = []
        for case in cases:
            current.append(case)
            if len(current) >= per_sheet and len(cases) > per_sheet:
                sheets.append(current)
                current = []
    if current:
        sheets.append(current)
    return sheets


def answered(paths: list[Path]) -> set[tuple[str, int]]:
    """(transcript, prompt line) of every case these answer files hold a query for."""
    out = set()
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                out.add((item["transcript"], item["prompt"]))
    return out


def write_split(root: Path, labels: Path, out: Path, per_sheet: int, split: str,
                skip: set[tuple[str, int]] | frozenset[tuple[str, int]] = frozenset()) -> tuple[int, int]:
    rels = store_transcripts(labels)
    rels.sort(key=lambda rel: (session_start(str(root / rel)), rel))
    sessions = [[c for c in session_cases(root, rel) if (c["transcript"], c["prompt"]) not in skip]
                for rel in rels]
    sheets = sheets_of([s for s in sessions if s], per_sheet)
    out.mkdir(parents=True, exist_ok=True)
    for number, cases in enumerate(sheets, start=1):
        answers = f"sheet-{number:02d}.answers.jsonl"
        body = [HEADER.format(split=split, number=number, cases=len(cases), answers=answers)]
        body += [render(case) for case in cases]
        (out / f"sheet-{number:02d}.md").write_text("\n".join(body), encoding="utf-8")
        with open(out / answers, "w", encoding="utf-8") as handle:
            for case in cases:
                line = {"transcript": case["transcript"], "prompt": case["prompt"], "query": ""}
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    return len(sheets), sum(len(s) for s in sheets)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, type=Path, help="the mirror of corpora/sessions (JSONL)")
    parser.add_argument("--out", required=True, type=Path, help="where the sheets go (outside the repository)")
    parser.add_argument("--labels", type=Path, default=LABELS, help="the labels folder (SPLIT/delivery.jsonl)")
    parser.add_argument("--per-sheet", type=int, default=60, help="about this many cases a sheet")
    parser.add_argument("--splits", default=",".join(SPLITS), help="label folders, comma-separated")
    parser.add_argument("--skip-answered", type=Path, action="append", default=[], metavar="FILE",
                        help="leave out the prompts this answer file has a query for (repeatable)")
    args = parser.parse_args(argv)
    skip = answered(args.skip_answered)
    if args.out.resolve().is_relative_to(LABELS.parents[1]):
        print("query_sheets: --out must be outside the repository (the sheets hold session text)",
              file=sys.stderr)
        return 2
    ready = []
    for split in [s for s in args.splits.split(",") if s]:
        labels = args.labels / split / "delivery.jsonl"
        if not labels.is_file():
            print(f"query_sheets: no {labels} (hint: --labels is the folder holding dev/ and test/)",
                  file=sys.stderr)
            return 2
        sheets, cases = write_split(args.root, labels, args.out / split, args.per_sheet, split, skip)
        ready.append(f"{split}: {sheets} sheets, {cases} cases")
        print(ready[-1])
    (args.out / "READY").write_text("\n".join(ready) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
