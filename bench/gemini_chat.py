"""Deterministic Gemini CLI chat recordings (its transcript, JSON lines) of a chosen size whose last turn is the
evidence turn of bench/transcript.py: the same prompt, failing test, read, cause, edit, passing test and closing
message, as Gemini CLI 0.61 records them (the session's fields first, then message records; a reply appended
again once its tool calls are known; the tool results as user records of `functionResponse` parts; `$set`
lines; the shape tests/test_gemini_host.py writes, read by gate/hosts/gemini/chat.py). The shell is
`run_shell_command` (its output ends with `Exit Code: N` when it failed), a read `read_file`, an edit `replace`.

The filler is earlier turns of the same kind of bulk as the JSONL transcript's (file reads, command output,
edits, replies), so a Stop hook reading a recording reads about what it reads in Claude Code.

    python -m bench.gemini_chat --size 50KB --out chat.jsonl
"""

from __future__ import annotations

import json
import random
import uuid
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


class _Writer:
    """Writes recording lines and counts what it wrote."""

    def __init__(self, handle: Any, rng: random.Random, cwd: str) -> None:
        self.handle = handle
        self.rng = rng
        self.cwd = cwd
        self.clock = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
        self.size = 0
        self.lines = 0
        self.records = 0

    def line(self, value: dict[str, Any]) -> None:
        text = json.dumps(value, ensure_ascii=False) + "\n"
        self.handle.write(text)
        self.size += len(text.encode("utf-8"))
        self.lines += 1

    def stamp(self) -> str:
        self.clock += timedelta(milliseconds=self.rng.randint(50, 4000))
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def new_id(self) -> str:
        self.records += 1
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def record(self, record_id: str, kind: str, content: Any, **fields: Any) -> None:
        self.line({"id": record_id, "timestamp": self.stamp(), "type": kind, "content": content, **fields})

    def prompt(self, text: str) -> None:
        self.record(self.new_id(), "user", [{"text": text}])

    def say(self, text: str) -> None:
        self.record(self.new_id(), "gemini", text, thoughts=[], model="gemini-2.5-pro")

    def call(self, name: str, args: dict[str, Any], output: str, text: str = "") -> None:
        """A reply whose tool call ran: the reply, then again with its call, then the call's result."""
        reply, call = self.new_id(), f"{name}-{self.rng.getrandbits(48):012x}"
        response = [{"functionResponse": {"id": call, "name": name, "response": {"output": output}}}]
        self.record(reply, "gemini", text, thoughts=[], model="gemini-2.5-pro")
        self.record(reply, "gemini", text, thoughts=[], model="gemini-2.5-pro",
                    toolCalls=[{"id": call, "name": name, "args": args, "result": response, "status": "success",
                                "timestamp": self.stamp()}])
        self.record(self.new_id(), "user", response)

    def shell(self, command: str, output: str, code: int) -> None:
        tail = f"\nExit Code: {code}" if code else ""
        self.call("run_shell_command", {"command": command, "description": "run it"},
                  f"<untrusted_context>\nOutput: {output}{tail}\n</untrusted_context>")

    def read(self, path: str, body: str) -> None:
        self.call("read_file", {"file_path": path}, body)

    def edit(self, path: str, old: str, new: str) -> None:
        self.call("replace", {"file_path": path, "old_string": old, "new_string": new},
                  f"Successfully modified file: {path} (1 replacements).")

    def updated(self) -> None:
        self.line({"$set": {"lastUpdated": self.stamp()}})


def _filler_turn(w: _Writer, rng: random.Random, pool: _Pool, gen: Generator, cap: int) -> None:
    """One earlier turn: prompt, reads and test runs, perhaps an edit, a reply."""
    domain = rng.choice(list(gen.domain_words))
    w.prompt(gen.fill(rng.choice(("Why does |i| |W|?", "Fix |e|", "Add |W| to |p|", "Can you check |p|?")), domain))
    w.say(rng.choice(pool.prose))
    for _ in range(rng.randint(1, 5)):
        roll = rng.random()
        if roll < 0.45:
            path, body = rng.choice(pool.files)
            w.read(path, body[:cap])
        elif roll < 0.8:
            w.shell(f"pytest {gen.paths.draw(rng)} -q", rng.choice(pool.outputs)[:cap], int(rng.random() < 0.2))
        else:
            path, body = rng.choice(pool.files)
            old = body.split("\n", 1)[0].split("\t", 1)[-1]
            w.edit(path, old, old.upper())
    w.say(rng.choice(pool.prose))
    w.updated()


def _last_turn(w: _Writer) -> None:
    """The turn the Stop hook judges, as bench/transcript.py's: failing test, read, cause, edit, passing test,
    closing decision."""
    w.prompt(LAST_PROMPT)
    w.say(FIRST_STEP)
    test = WATERFALL_TEST
    w.shell(test, TEST_FAILS, 1)
    waterfall = f"{w.cwd}/{WATERFALL}"  # Gemini's file tools name absolute paths
    w.read(waterfall, _WATERFALL_SOURCE)
    w.say(CAUSE)
    w.edit(waterfall, FIX_OLD, FIX_NEW)  # Gemini's `replace`: the transcript's Edit
    w.shell(test, TEST_PASSES, 0)
    w.say(LAST_MESSAGE)
    w.updated()


def write_chat(path: Path, size: int, seed: int = 13, cwd: str = "/home/dev/project",
               target: int | None = None) -> Transcript:
    """Write filler turns until the file is about `size` bytes, then the evidence turn (~4 KB). `target`: the
    size the recording's rows are named by (default `size`)."""
    rng, gen, pool, session_id = start(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        w = _Writer(handle, rng, cwd)
        w.line({"sessionId": session_id, "projectHash": f"{rng.getrandbits(256):064x}",
                "startTime": "2026-03-02T09:00:00.000Z", "lastUpdated": "2026-03-02T09:00:00.000Z", "kind": "main"})
        w.line({"$set": {"messages": [{"id": w.new_id(), "type": "user", "content": [
            {"text": f"<session_context>\nWorking directory: {cwd}\n</session_context>"}]}]}})
        fill(w, size, 6_000, lambda cap: _filler_turn(w, rng, pool, gen, cap))
        _last_turn(w)
    return Transcript(path, size if target is None else target, w.size, w.lines, session_id, LAST_MESSAGE)


def main(argv: list[str] | None = None) -> int:
    return writer_main(argv, "python -m bench.gemini_chat", __doc__.split("\n")[0], 13, write_chat)


if __name__ == "__main__":
    raise SystemExit(main())
