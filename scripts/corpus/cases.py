"""Annotation sheets for the corpus: every prompt and every turn end, as the gates see them, with stable ids.

    python scripts/corpus/cases.py --root MIRROR --out DIR [--owners A,B,…]

MIRROR is a directory of JSONL transcripts laid out as corpora/sessions/ (scripts/corpus/mirror.py builds
one: the raw transcripts plus the converted exports). For each owner it writes, under DIR (never inside the
repository: the sheets hold other people's text):
- OWNER.shift.txt      every prompt of every session in order, with the reply before it (rubric: shift.md)
- OWNER.writeback.txt  every turn that ends with a Stop: its prompt, its tool calls, its text (writeback.md)
- OWNER.ids.jsonl      the ids: {"transcript", "prompt"|"turn": LINE, "session", "n"}

The ids are what `gate replay --labels` reads: the transcript's path relative to MIRROR and the 1-based line
of the prompt (for a turn: the prompt that opened it). The steps come from gate.replay.timeline, the turn's
content from gate.session.transcript.read_turn at the Stop's offset: exactly what the gates read.
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
from gate.session.turn import Turn

PROMPT_CHARS = 1500
REPLY_CHARS = 700
TURN_TEXT_CHARS = 3500
RESULT_CHARS = 160


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    return text[:head] + f" […{len(text) - limit} chars…] " + text[-(limit - head) :]


def _tool_line(turn: Turn, index: int) -> str:
    use = turn.tool_uses[index]
    data = use.input
    if use.name == "Bash":
        detail = str(data.get("command", "")).strip().splitlines()[0:1]
        shown = detail[0][:200] if detail else ""
    elif isinstance(data.get("file_path") or data.get("path") or data.get("notebook_path"), str):
        shown = str(data.get("file_path") or data.get("path") or data.get("notebook_path"))
    else:
        shown = json.dumps(data, ensure_ascii=False)[:160]
    result = turn.result_for(use.id)
    if result is None:
        outcome = "(no result recorded)"
    else:
        flag = "ERROR " if result.is_error else ""
        outcome = flag + _clip(" ".join(result.text.split()), RESULT_CHARS)
    return f"  [{use.name}] {shown}\n      -> {outcome}"


def _session_files(root: Path, owner: str) -> list[Path]:
    return sorted(p for p in (root / owner).rglob("*.jsonl") if p.is_file())


def _start_time(path: Path) -> str:
    return session_start(str(path))


def write_owner(root: Path, owner: str, out: Path) -> tuple[int, int]:
    files = sorted(_session_files(root, owner), key=lambda p: (_start_time(p), str(p)))
    shift_lines: list[str] = []
    stop_lines: list[str] = []
    ids: list[dict[str, object]] = []
    prompts = stops = 0
    for path in files:
        rel = str(path.relative_to(root))
        timeline = read_timeline(str(path))
        started = _start_time(path)
        shift_lines.append(f"\n######## SESSION {rel}  (started {started or 'unknown'})")
        stop_lines.append(f"\n######## SESSION {rel}  (started {started or 'unknown'})")
        n_prompt = n_turn = 0
        last_prompt = 0
        texts: dict[int, str] = {}
        for step in timeline.steps:
            if step.name == "UserPromptSubmit":
                before = read_turn(str(path), None, end=step.end) if n_prompt else None
                if before is not None and (before.prompt or before.assistant_texts):
                    if before.prompt and before.prompt != texts.get(last_prompt):
                        # a slash command ran in between: its reply is the one the next prompt follows
                        shift_lines.append(f"    (then the user ran {_clip(before.prompt, 80)})")
                    reply = _clip(" ".join(before.text.split()), REPLY_CHARS)
                    shift_lines.append(f"    (assistant replied) {reply}")
                last_prompt = step.line
                texts[step.line] = str(step.event.get("prompt", ""))
                shift_lines.append(f"\n--- P {rel}#{step.line}  (prompt {n_prompt} of the session)")
                shift_lines.append(_clip(texts[step.line], PROMPT_CHARS))
                ids.append({"transcript": rel, "prompt": step.line, "session": timeline.session_id, "n": n_prompt})
                n_prompt += 1
                prompts += 1
            elif step.name == "Stop" and not step.event.get("stop_hook_active"):
                turn = read_turn(str(path), str(step.event.get("last_assistant_message") or ""), end=step.end)
                stop_lines.append(f"\n--- T {rel}#{step.turn}  (turn {n_turn} of the session)")
                stop_lines.append("PROMPT: " + _clip(turn.prompt or texts.get(step.turn, ""), PROMPT_CHARS))
                if turn.tool_uses:
                    stop_lines.append(f"TOOLS ({len(turn.tool_uses)} calls):")
                    stop_lines += [_tool_line(turn, i) for i in range(min(len(turn.tool_uses), 40))]
                    if len(turn.tool_uses) > 40:
                        stop_lines.append(f"  … {len(turn.tool_uses) - 40} more calls")
                stop_lines.append("ASSISTANT TEXT:")
                stop_lines.append(_clip(turn.text, TURN_TEXT_CHARS))
                ids.append({"transcript": rel, "turn": step.turn, "session": timeline.session_id, "n": n_turn})
                n_turn += 1
                stops += 1
    (out / f"{owner}.shift.txt").write_text("\n".join(shift_lines) + "\n", encoding="utf-8")
    (out / f"{owner}.writeback.txt").write_text("\n".join(stop_lines) + "\n", encoding="utf-8")
    with open(out / f"{owner}.ids.jsonl", "w", encoding="utf-8") as handle:
        for item in ids:
            handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    return prompts, stops


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, type=Path, help="the mirror of corpora/sessions (JSONL)")
    parser.add_argument("--out", required=True, type=Path, help="where the sheets go (outside the repository)")
    parser.add_argument("--owners", default="", help="comma-separated owner folders (default: all)")
    args = parser.parse_args(argv)
    owners = [o for o in args.owners.split(",") if o] or sorted(
        p.name for p in args.root.iterdir() if p.is_dir()
    )
    args.out.mkdir(parents=True, exist_ok=True)
    for owner in owners:
        if not (args.root / owner).is_dir():
            print(f"cases: no folder {owner} under {args.root}", file=sys.stderr)
            return 2
        prompts, stops = write_owner(args.root, owner, args.out)
        print(f"{owner}: {prompts} prompts, {stops} turn ends")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
