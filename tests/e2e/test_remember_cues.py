"""Cues without effort (issue 29), in the real Claude Code CLI against the scripted model: the agent stores a
memory with `gate remember` in its Bash tool, without --cues, in a turn whose prompt has distinctive words and
whose command failed; the memory's TOML carries those words and the error line, apart from the writer's cues.
In the next turn the agent writes --cues itself: they are kept as written and nothing is added."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest
from claude_harness import Claude, E2EDirs, GateCli
from model_server import JSON, ModelServer, Reply, after_tool_call, last_user_contains

pytestmark = pytest.mark.e2e

FIRST = ("The quartermaster manifest import crashes on the harbour shipment batch. Find out why the quartermaster "
         "loader fails on harbour shipments.")
SECOND = "Now note that the manifest loader needs the customs ledger opened first."
FAILING = "python3 -c \"raise KeyError('harbour_shipment_ledger')\"  # the manifest import"
FIRST_TITLE = "Quartermaster manifests need the shipment ledger loaded before import"
SECOND_TITLE = "The manifest loader opens the customs ledger before any shipment"
SECOND_CUES = "customs ledger first,  loader order"


def _results(transcript: list[JSON]) -> dict[str, str]:
    """The Bash command -> the text of its tool result, for every Bash call of the session."""
    commands: dict[str, str] = {}
    out: dict[str, str] = {}
    for line in transcript:
        content = line.get("message", {}).get("content") if isinstance(line.get("message"), dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") == "Bash":
                commands[block["id"]] = block["input"]["command"]
            elif block.get("type") == "tool_result" and block.get("tool_use_id") in commands:
                body = block.get("content")
                text = body if isinstance(body, str) else "\n".join(
                    str(part.get("text", "")) for part in body or [] if isinstance(part, dict))
                out[commands[block["tool_use_id"]]] = text
    return out


def _new_id(output: str) -> str:
    """The id `gate remember` printed (its stdout; the CLI's tool result holds its stderr notes too)."""
    found = re.findall(r"^m-[0-9a-f]{6}$", output, re.MULTILINE)
    assert len(found) == 1, output
    return found[0]


def _memory_file(gate_home: Path, memory_id: str) -> dict:
    (file,) = gate_home.rglob(f"{memory_id}.toml")
    return tomllib.loads(file.read_text(encoding="utf-8"))


def test_a_memory_stored_without_cues_carries_the_turns_words_and_error(
    claude: Claude, gate: GateCli, model_server: ModelServer, e2e_dirs: E2EDirs, gate_bin: Path
) -> None:
    gate.run("install", "--project", str(e2e_dirs.project))
    first = f"{gate_bin} remember {shlex.quote(FIRST_TITLE)} --kind gotcha"
    second = f"{gate_bin} remember {shlex.quote(SECOND_TITLE)} --cues {shlex.quote(SECOND_CUES)}"
    server = model_server
    server.when(last_user_contains(FIRST), Reply.bash(FAILING, "Run the manifest import"), times=1)
    server.when(after_tool_call("Bash", "harbour_shipment_ledger"), Reply.bash(first, "Store what was found"))
    server.when(after_tool_call("Bash", f"remember {shlex.quote(FIRST_TITLE)}"), Reply.text("Stored."))
    server.when(last_user_contains(SECOND), Reply.bash(second, "Store the loader order"), times=1)
    server.when(after_tool_call("Bash", f"remember {shlex.quote(SECOND_TITLE)}"), Reply.text("Stored too."))

    run = claude.session([FIRST, SECOND])
    results = _results(run.transcript())
    assert "KeyError" in results[FAILING], results  # the command failed, as the turn saw it

    shown = results[first]
    memory_id = _new_id(shown)
    stored = _memory_file(e2e_dirs.gate_home, memory_id)
    assert stored["title"] == FIRST_TITLE and "cues" not in stored, stored
    derived = stored["derived_cues"]
    words, *errors = derived.split("; ")
    assert words.split()[:3] == ["quartermaster", "harbour", "shipment"], derived  # most used first
    assert {"manifest", "crashes", "loader"} <= set(words.split()), derived
    assert errors == ["KeyError: 'harbour_shipment_ledger'"], derived
    assert f"cues added from the turn: {derived}" in shown, "the agent sees what was added"
    hits = gate.search("harbour_shipment_ledger KeyError")["hits"]
    assert [hit["id"] for hit in hits][:1] == [memory_id], hits

    kept = _memory_file(e2e_dirs.gate_home, _new_id(results[second]))
    assert kept["cues"] == "customs ledger first, loader order" and "derived_cues" not in kept, kept
    assert "cues added" not in results[second]
