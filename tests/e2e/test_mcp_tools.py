"""MCP tools at PreToolUse in the real Claude Code CLI (issue 45): gate's matcher (a regular expression, anchored)
still brings every built-in tool it names to the hook, brings the MCP tools whose name says they write
(rules/triggers.toml [search_first] change_tools) and no other; the first such call of a turn that owes the
agent's search is refused once, as an edit is. The same rule holds in Codex (tests/e2e/test_codex.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from claude_harness import Claude, E2EDirs, GateCli
from model_server import ModelServer, Reply, after_tool_result, last_user_contains

pytestmark = pytest.mark.e2e

NOTES_SERVER = Path(__file__).with_name("mcp_notes_server.py")
TITLE = "Invoice totals round half to even (ROUND_HALF_EVEN): the finance team's rule for billing"
SHIFT = "Invoices come out a cent too high: switch the invoice rounding in billing/rounding.py to the finance rule."
REFUSAL_MARK = "MEMORY SEARCH FIRST"


def test_an_mcp_tool_that_writes_is_refused_first_at_a_shift_and_one_that_reads_is_not_hooked(
    claude: Claude, model_server: ModelServer, gate: GateCli, e2e_dirs: E2EDirs
) -> None:
    gate.run("install", "--project", str(e2e_dirs.project))
    gate.remember(TITLE, "--kind", "decision")
    config = e2e_dirs.root / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"notes": {"command": sys.executable, "args": [str(NOTES_SERVER)]}}}))
    (e2e_dirs.project / "billing").mkdir()
    (e2e_dirs.project / "billing" / "rounding.py").write_text("ROUNDING = ROUND_HALF_UP\n")
    write = Reply.tool("mcp__notes__write_note", {"text": "invoice rounding: ROUND_HALF_EVEN"})
    model_server.when(last_user_contains("Invoices come out"),
                      Reply.tool("Read", {"file_path": str(e2e_dirs.project / "billing" / "rounding.py")}), times=1)
    model_server.when(after_tool_result("ROUND_HALF_UP"), Reply.tool("mcp__notes__read_note", {}), times=1)
    model_server.when(after_tool_result("notes: none"), write, times=1)
    model_server.when(after_tool_result(REFUSAL_MARK), write, times=1)
    model_server.when(after_tool_result("written 1"), Reply.text("Noted."), times=1)
    run = claude.run(SHIFT, args=["--mcp-config", str(config)],
                     allowed_tools=["Read", "mcp__notes__read_note", "mcp__notes__write_note"])

    assert run.result.get("result") == "Noted.", run.describe()
    records = [r for r in gate.audit() if r.get("session") == run.session_id and r.get("event") == "PreToolUse"]
    # Read reached the hook (the anchored matcher still names it); read_note did not; write_note was refused
    # once, then ran.
    assert [(r.get("tool"), r["decision"]) for r in records][:2] == [
        ("Read", records[0]["decision"]), ("mcp__notes__write_note", "refused")], records
    assert records[0]["decision"] != "refused" and len(records) == 3 and records[2]["decision"] != "refused"
