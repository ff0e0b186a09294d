"""Deterministic Codex CLI rollouts (its transcript, JSON lines) of a chosen size whose last turn is the evidence
turn of bench/transcript.py: the same prompt, failing test, read, cause, edit, passing test and closing message,
as Codex writes them (`session_meta`, `turn_context`, `response_item`, `event_msg`; the shape
tests/test_codex_rollout.py writes, read by gate/hosts/codex/rollout.py). A read is a shell call, an edit an
`apply_patch`.

The filler is earlier turns of the same kind of bulk as the JSONL transcript's (file reads, command output,
patches, reasoning, token counts), so a Stop hook reading a rollout reads about what it reads in Claude Code.

    python -m bench.rollout --size 50KB --out rollout.jsonl
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.corpus import Generator
from bench.transcript import (
    _WATERFALL_SOURCE,
    CAUSE,
    FIRST_STEP,
    FIX_NEW,
    FIX_OLD,
    LAST_MESSAGE,
    LAST_PROMPT,
    TEST_FAILS,
    TEST_PASSES,
    WATERFALL,
    WATERFALL_TEST,
    Transcript,
    _Pool,
    fill,
    start,
    writer_main,
)

CLI_VERSION = "0.171.0"
MODEL = "gpt-5.5"
# The evidence turn's edit as Codex's apply_patch envelope (the same change as the JSONL transcript's Edit).
PATCH = "".join([f"*** Begin Patch\n*** Update File: {WATERFALL}\n@@\n",
                 *(f"-{line}\n" for line in FIX_OLD.split("\n")), *(f"+{line}\n" for line in FIX_NEW.split("\n")),
                 "*** End Patch\n"])


class _Writer:
    """Writes rollout lines (timestamp, type, payload) and counts what it wrote."""

    def __init__(self, handle: Any, rng: random.Random, session_id: str, cwd: str) -> None:
        self.handle = handle
        self.rng = rng
        self.session_id = session_id
        self.cwd = cwd
        self.clock = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
        self.size = 0
        self.lines = 0
        self.calls = 0

    def add(self, kind: str, payload: dict[str, Any]) -> None:
        self.clock += timedelta(milliseconds=self.rng.randint(50, 4000))
        stamp = self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        line = json.dumps({"timestamp": stamp, "type": kind, "payload": payload}, ensure_ascii=False) + "\n"
        self.handle.write(line)
        self.size += len(line.encode("utf-8"))
        self.lines += 1

    def call_id(self) -> str:
        self.calls += 1
        return f"call_{self.rng.getrandbits(96):024x}"

    def prompt(self, text: str) -> None:
        """A person's prompt: the turn's context, the message the model gets, and the user_message event."""
        self.add("turn_context", {"cwd": self.cwd, "approval_policy": "on-request", "model": MODEL,
                                  "sandbox_policy": {"type": "workspace-write"}, "summary": "auto"})
        self.add("response_item", {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": text}]})
        self.add("event_msg", {"type": "user_message", "message": text, "images": []})

    def say(self, text: str) -> None:
        self.add("event_msg", {"type": "agent_message", "message": text})
        self.add("response_item", {"type": "message", "role": "assistant",
                                   "content": [{"type": "output_text", "text": text}]})

    def reasoning(self, text: str) -> None:
        self.add("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": text}],
                                   "encrypted_content": f"{self.rng.getrandbits(512):0128x}"})

    def shell(self, command: str, output: str, code: int) -> None:
        call = self.call_id()
        self.add("response_item", {"type": "function_call", "name": "exec_command", "call_id": call,
                                   "arguments": json.dumps({"cmd": command, "workdir": self.cwd})})
        self.add("response_item", {"type": "function_call_output", "call_id": call, "output":
                                   f"Chunk ID: {self.calls}\nWall time: 0.{self.rng.randint(1, 9)} seconds\n"
                                   f"Process exited with code {code}\nOutput:\n{output}"})

    def patch(self, patch: str, summary: str) -> None:
        call = self.call_id()
        self.add("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": call,
                                   "input": patch})
        self.add("response_item", {"type": "custom_tool_call_output", "call_id": call, "output": json.dumps(
            {"output": f"Success. Updated the following files:\n{summary}\n", "metadata": {"exit_code": 0}})})

    def tokens(self) -> None:
        """The token count event Codex writes after each model response (no conversation)."""
        used = self.rng.randint(10_000, 90_000)
        self.add("event_msg", {"type": "token_count", "info": {"total_token_usage": {
            "input_tokens": used, "cached_input_tokens": used // 2, "output_tokens": self.rng.randint(20, 900)}}})


def _filler_turn(w: _Writer, rng: random.Random, pool: _Pool, gen: Generator, cap: int) -> None:
    """One earlier turn: prompt, reasoning, shell reads and test runs, perhaps a patch, a reply."""
    domain = rng.choice(list(gen.domain_words))
    w.prompt(gen.fill(rng.choice(("Why does |i| |W|?", "Fix |e|", "Add |W| to |p|", "Can you check |p|?")), domain))
    w.reasoning(rng.choice(pool.prose))
    w.say(rng.choice(pool.prose))
    w.tokens()
    for _ in range(rng.randint(1, 5)):
        roll = rng.random()
        if roll < 0.45:
            path, body = rng.choice(pool.files)
            w.shell(f"sed -n '1,400p' {path}", body[:cap], 0)
        elif roll < 0.8:
            w.shell(f"pytest {gen.paths.draw(rng)} -q", rng.choice(pool.outputs)[:cap], int(rng.random() < 0.2))
        else:
            path, body = rng.choice(pool.files)
            old = body.split("\n", 1)[0].split("\t", 1)[-1]
            w.patch(f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{old.upper()}\n*** End Patch\n",
                    f"M {path}")
        w.tokens()
    w.say(rng.choice(pool.prose))
    w.tokens()


def _last_turn(w: _Writer) -> None:
    """The turn the Stop hook judges, as bench/transcript.py's: failing test, read, cause, edit, passing test,
    closing decision."""
    w.prompt(LAST_PROMPT)
    w.say(FIRST_STEP)
    test = WATERFALL_TEST
    w.shell(test, TEST_FAILS, 1)
    w.shell(f"sed -n '1,40p' {WATERFALL}", _WATERFALL_SOURCE, 0)
    w.say(CAUSE)
    w.patch(PATCH, f"M {WATERFALL}")
    w.shell(test, TEST_PASSES, 0)
    w.say(LAST_MESSAGE)
    w.tokens()


def write_rollout(path: Path, size: int, seed: int = 11, cwd: str = "/home/dev/project",
                  target: int | None = None) -> Transcript:
    """Write filler turns until the file is about `size` bytes, then the evidence turn (~4 KB). `target`: the
    size the rollout's rows are named by (default `size`; the bench passes the JSONL transcript's, whose actual
    size it asks for)."""
    rng, gen, pool, session_id = start(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        w = _Writer(handle, rng, session_id, cwd)
        w.add("session_meta", {"id": session_id, "timestamp": "2026-03-02T09:00:00.000Z", "cwd": cwd,
                               "originator": "codex_cli_rs", "cli_version": CLI_VERSION, "source": "cli",
                               "model_provider": "openai"})
        w.add("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": f"<environment_context>\n  <cwd>{cwd}</cwd>\n</environment_context>"}]})
        fill(w, size, 6_000, lambda cap: _filler_turn(w, rng, pool, gen, cap))
        _last_turn(w)
    return Transcript(path, size if target is None else target, w.size, w.lines, session_id, LAST_MESSAGE)


def main(argv: list[str] | None = None) -> int:
    return writer_main(argv, "python -m bench.rollout", __doc__.split("\n")[0], 11, write_rollout)


if __name__ == "__main__":
    raise SystemExit(main())
