"""`gate demo`: see the gates work in a minute, without a model — the shipped sample session, played through the
real hooks in a throwaway home, step by step: what the agent would be shown, and when a turn is held."""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import textwrap
from pathlib import Path

from gate.demo.play import Demo, Step, play, write_sample
from gate.paths import project_root

WIDTH = 116
# Plain words for the audit's reason codes the sample shows; any other code is printed as it is.
QUIET = {
    "SKIP_NO_CUE": "silent: no memory is anchored to this",
    "SUPPRESSED_ALREADY_DELIVERED": "silent: what is anchored here was shown already in this session",
    "SKIP_NO_SHIFT": "silent: a follow-up on the same topic that names nothing new",
    "ALLOW_STOP_ACTIVE": "let through: the gate never holds the Stop that follows its own block",
    "ALLOW_NO_SIGNAL": "let through: nothing was settled in this turn",
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="play a sample session through the real hooks and show what the agent is shown (no model)",
        description=(
            "Plays the sample session gate ships (a recorded transcript of a short bug fix, and the store it "
            "starts from) through the real hook process, in a throwaway HOME and GATE_HOME: session-start "
            "directives, a recall at a topic shift, the turn's first change refused until the agent has searched "
            "memory itself, a gotcha anchored to a file on its first touch, a write-back block and what came of "
            "it. No model, no network; your own memories and settings are not touched."
        ),
    )
    parser.add_argument("--json", action="store_true", help="every step as JSON")
    parser.add_argument(
        "--keep", action="store_true", help="keep the throwaway directory (its path is printed) to look around"
    )
    parser.add_argument(
        "--sample-to",
        metavar="DIR",
        help="play nothing: write the sample (session.jsonl, memories.jsonl) into DIR, the transcript set in the "
        "current project, e.g. to try `gate import` and `gate replay` on it",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.sample_to:
        for path in write_sample(Path(args.sample_to), Path(project_root())):
            print(path)
        return 0
    root = Path(tempfile.mkdtemp(prefix="gate-demo-"))
    try:
        demo = play(root)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(
            json.dumps(
                {
                    "memories": [m["id"] for m in demo.memories],
                    "steps": [s.to_json() for s in demo.steps],
                    "errors": demo.errors,
                    "kept": str(root) if args.keep else None,
                },
                indent=2,
            )
        )
    else:
        _print(demo)
        if args.keep:
            print(f"\nkept: {root} (look around: GATE_HOME={root / 'gate-home'} gate stats --project {demo.project})")
    return 1 if demo.errors else 0


def _titles(demo: Demo) -> dict[str, str]:
    return {str(m["id"]): f"{m['kind']}: {m['title']}" for m in demo.memories}


def _outcome(step: Step, titles: dict[str, str]) -> str:
    named = "; ".join(f"{i} ({titles.get(i, 'stored in this session')})" for i in step.delivered)
    if step.blocked:
        return "HELD: the write-back gate blocks the end of the turn; the agent is shown:"
    if step.refused:
        return "REFUSED once: the turn's first change waits for the agent's own memory search; the agent is shown:"
    if step.found:
        return "the agent's own search: the turn's changes may go on"
    if step.delivered and step.event == "SessionStart":
        return f"directives at session start: {named}"
    if step.delivered and step.event == "UserPromptSubmit":
        return f"RECALL: the hook searched memory and delivers {named}"
    if step.delivered and step.event == "PreToolUse":
        return f"GOTCHA: a memory anchored to this file, on its first touch: {named}"
    if step.delivered:
        return f"delivers {named}"
    if step.decision == "failed_open":
        return "the hook failed open (see the errors below)"
    code = step.reason or step.decision
    if code in QUIET:
        return f"{QUIET[code]} ({code})"
    return f"{'let through' if step.event == 'Stop' else 'silent'} ({code})"


def _print(demo: Demo) -> None:
    titles = _titles(demo)
    prompts = sum(1 for s in demo.steps if s.event == "UserPromptSubmit")
    print(
        f"gate demo: a recorded session of {prompts} prompts, played through the real hooks in a throwaway home "
        "(no model, no network)."
    )
    print(f"The store it starts from: {len(demo.memories)} memories of a small billing project (gate/demo/sample/):")
    for memory in demo.memories:
        anchored = f"  [anchored to {', '.join(memory['paths'])}]" if memory.get("paths") else ""
        print(f"  {memory['id']}  {memory['kind']:<10} {memory['title']}{anchored}")
    for step in demo.steps:
        print()
        print(f"{step.number:>2}. {step.event:<16} {_clip(step.what, WIDTH - 20)}")
        print(f"    -> {_outcome(step, titles)}")
        for line in step.shown.splitlines():
            for piece in textwrap.wrap(line, WIDTH - 6, subsequent_indent="  ") or [""]:
                print(f"    | {piece}")
        if step.ran:
            print(f"    -> the agent stores what the block asked for: `gate remember` ran for real here: {step.ran}")
        if step.found:
            print("    -> the agent searches memory in its own words: `gate search` ran for real here:")
            for line in step.found.splitlines():
                print(f"    | {_clip(line, WIDTH - 6)}")
    recalls = [i for s in demo.steps if s.event == "UserPromptSubmit" for i in s.delivered]
    gotchas = [i for s in demo.steps if s.event == "PreToolUse" for i in s.delivered]
    blocks = sum(1 for s in demo.steps if s.blocked)
    refusals = sum(1 for s in demo.steps if s.refused)
    searches = sum(1 for s in demo.steps if s.found)
    stored = [s.ran for s in demo.steps if s.ran]
    silent = sum(1 for s in demo.steps if not s.delivered and not s.blocked and not s.refused)
    print()
    print(
        f"In short: {len(recalls)} recall ({', '.join(recalls) or 'none'}), {refusals} change refused until "
        f"{searches} search of the agent's own, {len(gotchas)} gotcha on first touch "
        f"({', '.join(gotchas) or 'none'}), {blocks} block, {len(stored)} memory stored "
        f"({', '.join(stored) or 'none'}); {silent} of {len(demo.steps)} hook runs silent."
    )
    print("In your own project: `gate doctor` checks the wiring, `gate stats` shows what was delivered and stored.")
    for error in demo.errors:
        print(f"error: {error}")


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
