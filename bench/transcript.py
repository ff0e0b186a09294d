"""Deterministic Claude Code transcripts (JSONL) of a chosen size whose last turn fixed a bug and made a decision.

The Stop hook reads the current turn from the transcript's tail; its cost must not grow with the session. So
the filler is realistic bulk (earlier turns with file reads, command output, thinking, and the noise line types
the CLI writes: attachment, system, api-request, api-request-blob, queue-operation, last-prompt, cost-state,
file-history-snapshot) and the last turn, identical at every size, carries the evidence: a failing test, a
read, an edit, a passing test and a closing message stating the cause and the decision.

    python -m bench.transcript --size 5MB --out t.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.corpus import Generator

CLI_VERSION = "2.1.332"
MODEL = "claude-sonnet-4-5"

LAST_PROMPT = "The reserve account trigger fires twice when the waterfall reruns for the same period. Fix it."
LAST_MESSAGE = (
    "Fixed. The root cause was that `settle_waterfall()` called `ReserveAccount.trigger()` on every rerun "
    "without checking the ledger. I decided to guard it with `ledger.last_run_id == run_id` instead of a "
    "database lock, because reruns happen in the same worker and a lock would add a round trip per tranche. "
    "`tests/payments/test_waterfall.py::test_rerun` failed before the change and passes now (12 passed)."
)


@dataclass(frozen=True)
class Transcript:
    path: Path
    target: int  # the size asked for (rows are named by it)
    size: int  # the size written
    lines: int
    session_id: str
    last_assistant_message: str


def parse_size(text: str) -> int:
    """'50KB' -> 50_000, '5MB' -> 5_000_000, '123' -> 123 (decimal units, as the issue states them)."""
    units = {"KB": 1_000, "MB": 1_000_000, "GB": 1_000_000_000, "B": 1}
    text = text.strip().upper()
    for unit, factor in units.items():
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * factor)
    return int(text)


def format_size(size: int) -> str:
    if size >= 1_000_000:
        return f"{size / 1_000_000:g}MB"
    if size >= 1_000:
        return f"{size / 1_000:g}KB"
    return f"{size}B"


class _Writer:
    """Writes lines with the envelope fields the CLI puts on conversation lines, chaining parentUuid."""

    def __init__(self, handle: Any, rng: random.Random, session_id: str, cwd: str) -> None:
        self.handle = handle
        self.rng = rng
        self.session_id = session_id
        self.cwd = cwd
        self.parent: str | None = None
        self.clock = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
        self.size = 0
        self.lines = 0

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def emit(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False) + "\n"
        self.handle.write(line)
        self.size += len(line.encode("utf-8"))
        self.lines += 1

    def conversation(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        self.clock += timedelta(milliseconds=self.rng.randint(200, 9000))
        uid = self.uid()
        record = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": CLI_VERSION,
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": uid,
            "timestamp": self.clock.isoformat().replace("+00:00", "Z"),
            **extra,
        }
        self.parent = uid
        self.emit(record)

    def user_prompt(self, text: str) -> None:
        self.conversation("user", {"role": "user", "content": text})

    def assistant(self, blocks: list[dict[str, Any]]) -> None:
        """One line per content block; blocks of one API message share message.id (as the CLI writes them)."""
        msg_id = f"msg_{self.rng.getrandbits(96):024x}"
        request_id = f"req_{self.rng.getrandbits(96):024x}"
        for block in blocks:
            message = {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [block],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": self.rng.randint(3, 30),
                    "cache_creation_input_tokens": self.rng.randint(0, 4000),
                    "cache_read_input_tokens": self.rng.randint(10_000, 90_000),
                    "output_tokens": self.rng.randint(20, 900),
                    "service_tier": "standard",
                },
            }
            self.conversation("assistant", message, requestId=request_id)

    def tool_result(self, tool_use_id: str, content: str, is_error: bool = False) -> None:
        block = {"tool_use_id": tool_use_id, "type": "tool_result", "content": content, "is_error": is_error}
        self.conversation(
            "user",
            {"role": "user", "content": [block]},
            toolUseResult={"stdout": content, "stderr": "", "interrupted": False, "isImage": False},
        )

    def tool_use(self, name: str, tool_input: dict[str, Any]) -> str:
        tool_id = f"toolu_{self.rng.getrandbits(96):024x}"
        self.assistant([{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}])
        return tool_id

    def noise(self, kind: str, payload: dict[str, Any]) -> None:
        """Non-conversation lines: hooks must skip them by type even though some carry a `message`."""
        self.clock += timedelta(milliseconds=self.rng.randint(1, 50))
        self.emit(
            {
                "type": kind,
                "sessionId": self.session_id,
                "timestamp": self.clock.isoformat().replace("+00:00", "Z"),
                "uuid": self.uid(),
                **payload,
            }
        )


class _Pool:
    """Pre-generated file bodies and command outputs, reused the way an agent re-reads the same files."""

    def __init__(self, rng: random.Random, gen: Generator) -> None:
        domains = list(gen.domain_words)
        self.files: list[tuple[str, str]] = []
        for _ in range(120):
            domain = rng.choice(domains)
            lines = [
                gen.fill(rng.choice(_CODE), domain) if rng.random() < 0.8 else "" for _ in range(rng.randint(20, 400))
            ]
            numbered = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, 1))
            self.files.append((gen.paths.draw(rng), numbered))
        self.outputs: list[str] = []
        for _ in range(80):
            domain = rng.choice(domains)
            lines = [gen.fill(rng.choice(_OUTPUT), domain) for _ in range(rng.randint(3, 120))]
            self.outputs.append("\n".join(lines))
        self.prose: list[str] = [
            " ".join(gen.fill(rng.choice(_PROSE), rng.choice(domains)) for _ in range(rng.randint(1, 6)))
            for _ in range(300)
        ]


_CODE = (
    "def |i|(|w|, |w|=None):",
    "    return |i|(|w|, |w|=|n|)",
    "    if |w| is None: raise |e|",
    "class |i|(|i|):",
    "    # |W|",
    "import |w|",
    "from |w| import |i|",
    "    for |w| in |i|: yield |w|",
)
_OUTPUT = (
    "|p|::test_|w|_|w| PASSED",
    "|p|::test_|w| FAILED",
    "|e|",
    "|p|:|n|: |W|",
    "warning: |W| in |p|",
    "ok |n| |w| |w|",
)
_PROSE = (
    "Let me look at |p| first.",
    "The |W| comes from |i|.",
    "I'll check how |i| handles |W|.",
    "That explains the |e|.",
    "Now I'll update |p| so |i| |w| the |W|.",
    "Running the tests for |p|.",
)


def _filler_turn(w: _Writer, rng: random.Random, pool: _Pool, gen: Generator, cap: int) -> None:
    """One earlier turn: prompt, thinking, tool calls with results (each at most `cap` chars), a reply, noise."""
    domain = rng.choice(list(gen.domain_words))
    prompt = gen.fill(rng.choice(("Why does |i| |W|?", "Fix |e|", "Add |W| to |p|", "Can you check |p|?")), domain)
    w.noise("queue-operation", {"operation": "enqueue", "content": prompt})
    w.user_prompt(prompt)
    w.noise("last-prompt", {"lastPrompt": prompt})
    w.noise(
        "attachment",
        {"attachment": {"type": "todo", "content": [], "itemCount": 0}, "message": {"role": "user", "content": ""}},
    )
    # The CLI records each model request; the blob carries the whole request, including injected hook context.
    w.noise("api-request", {"message": {"role": "user", "content": prompt}, "requestId": f"req_{w.uid()}"})
    context = rng.choice(pool.prose) + "\n" + rng.choice(pool.files)[1][: min(cap, rng.randint(500, 6000))]
    w.noise(
        "api-request-blob",
        {"message": {"role": "user", "content": "UserPromptSubmit hook additional context: " + context}},
    )
    w.assistant(
        [
            {"type": "thinking", "thinking": rng.choice(pool.prose), "signature": f"{w.rng.getrandbits(256):064x}"},
            {"type": "text", "text": rng.choice(pool.prose)},
        ]
    )
    for _ in range(rng.randint(1, 5)):
        roll = rng.random()
        if roll < 0.45:
            path, body = rng.choice(pool.files)
            tool_id = w.tool_use("Read", {"file_path": f"{w.cwd}/{path}"})
            w.tool_result(tool_id, body[:cap])
        elif roll < 0.8:
            tool_id = w.tool_use("Bash", {"command": f"pytest {gen.paths.draw(rng)} -q", "description": "Run tests"})
            w.tool_result(tool_id, rng.choice(pool.outputs)[:cap], is_error=rng.random() < 0.2)
        else:
            path, body = rng.choice(pool.files)
            old = body[:200]
            tool_id = w.tool_use("Edit", {"file_path": f"{w.cwd}/{path}", "old_string": old, "new_string": old.upper()})
            w.tool_result(tool_id, f"The file {w.cwd}/{path} has been updated.")
    w.assistant([{"type": "text", "text": rng.choice(pool.prose)}])
    w.noise("system", {"subtype": "turn_duration", "durationMs": rng.randint(2000, 90000), "level": "info"})
    w.noise("cost-state", {"costUSD": round(rng.random(), 4), "message": {"role": "system", "content": ""}})
    if rng.random() < 0.3:
        w.noise("file-history-snapshot", {"messageId": w.uid(), "snapshot": {"trackedFileBackups": {}}})


_WATERFALL_SOURCE = "\n".join(
    f"{n:>6}\t{line}"
    for n, line in enumerate(
        (
            "from payments.ledger import Ledger",
            "from payments.reserve import ReserveAccount",
            "",
            "def settle_waterfall(ledger: Ledger, run_id: str, tranches):",
            "    for tranche in tranches:",
            "        tranche.pay(ledger)",
            "    ReserveAccount(ledger).trigger()",
        ),
        1,
    )
)


# The evidence turn, the same in every agent's file (bench/rollout.py, bench/gemini_chat.py write it in theirs).
WATERFALL = "src/payments/waterfall.py"
WATERFALL_TEST = "pytest tests/payments/test_waterfall.py -q"
FIRST_STEP = "I'll reproduce it with the waterfall tests first."
TEST_FAILS = ("....F.......\nFAILED tests/payments/test_waterfall.py::test_rerun - AssertionError: trigger fired 2 "
              "times, expected 1\n1 failed, 11 passed in 0.84s")
TEST_PASSES = "............\n12 passed in 0.81s"
CAUSE = ("The cause is that settle_waterfall() fires ReserveAccount.trigger() on every run without checking the "
         "ledger's last_run_id.")
FIX_OLD = "    ReserveAccount(ledger).trigger()"
FIX_NEW = ("    if ledger.last_run_id != run_id:\n        ReserveAccount(ledger).trigger()\n"
           "        ledger.last_run_id = run_id")


def start(seed: int) -> tuple[random.Random, Generator, _Pool, str]:
    """A writer's random source, word generator, pool of filler pieces and session id, from its seed."""
    rng = random.Random(seed)
    gen = Generator(1000, seed)
    pool = _Pool(rng, gen)
    return rng, gen, pool, str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _last_turn(w: _Writer) -> None:
    """The turn the Stop hook judges: failing test, read, cause, edit, passing test, closing decision."""
    w.user_prompt(LAST_PROMPT)
    w.noise("last-prompt", {"lastPrompt": LAST_PROMPT})
    w.assistant([{"type": "text", "text": FIRST_STEP}])
    test = {"command": WATERFALL_TEST, "description": "Run waterfall tests"}
    tool_id = w.tool_use("Bash", test)
    w.tool_result(tool_id, TEST_FAILS, is_error=True)
    tool_id = w.tool_use("Read", {"file_path": f"{w.cwd}/{WATERFALL}"})
    w.tool_result(tool_id, _WATERFALL_SOURCE)
    w.assistant([{"type": "text", "text": CAUSE}])
    tool_id = w.tool_use("Edit", {"file_path": f"{w.cwd}/{WATERFALL}", "old_string": FIX_OLD, "new_string": FIX_NEW})
    w.tool_result(tool_id, f"The file {w.cwd}/{WATERFALL} has been updated.")
    tool_id = w.tool_use("Bash", test)
    w.tool_result(tool_id, TEST_PASSES)
    w.assistant([{"type": "text", "text": LAST_MESSAGE}])


def write_transcript(path: Path, size: int, seed: int = 11, cwd: str = "/home/dev/project") -> Transcript:
    """Write filler turns until the file is about `size` bytes, then the evidence turn (~4 KB)."""
    rng, gen, pool, session_id = start(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        w = _Writer(handle, rng, session_id, cwd)
        w.noise("summary", {"summary": "Payments waterfall and CI work", "leafUuid": w.uid()})
        fill(w, size, 7_000, lambda cap: _filler_turn(w, rng, pool, gen, cap))
        _last_turn(w)
    return Transcript(path, size, w.size, w.lines, session_id, LAST_MESSAGE)


def fill(w: Any, size: int, reserve: int, filler: Callable[[int], None]) -> None:
    """Filler turns (`filler(cap)`) until writer `w` is about `size` bytes less `reserve` (about what the last
    turn takes, so small files land near their target). Small files get small turns (cap: a turn's text at most
    size/100) instead of one giant one; the loop stops before a turn would likely overshoot (the average turn
    so far is the estimate). Shared by the transcript, rollout and chat-recording writers."""
    cap = max(300, size // 100)
    turns = 0
    while w.size + (w.size / turns / 2 if turns else 0) < size - reserve:
        filler(cap)
        turns += 1


def writer_main(argv: list[str] | None, prog: str, description: str, seed: int,
                write: Callable[[Path, int, int], Transcript], sizes: str = "e.g. 50KB, 5MB") -> int:
    """The command line of a bench file writer: --size, --seed, --out; prints what it wrote."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--size", default="50KB", help=f"target size, {sizes}")
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    info = write(args.out, parse_size(args.size), args.seed)
    print(f"{info.lines} lines, {info.size / 1e6:.2f} MB -> {info.path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return writer_main(argv, "python -m bench.transcript", __doc__.split("\n")[0], 11, write_transcript,
                       "e.g. 50KB, 5MB, 50MB")


if __name__ == "__main__":
    raise SystemExit(main())
