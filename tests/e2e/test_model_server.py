"""The scripted model server on its own (no CLI): rules, SSE framing, other endpoints, the request log."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from model_server import ModelServer, Reply, after_tool_call, last_user_contains, tail_text

pytestmark = pytest.mark.e2e


def post(server: ModelServer, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    request = urllib.request.Request(
        server.base_url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


def sse_events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.decode().strip().split("\n\n"):
        name, data = chunk.split("\n")
        events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


def user(text: str) -> dict[str, Any]:
    return {"model": "m", "stream": True, "messages": [{"role": "user", "content": text}]}


def test_rules_streams_and_log(tmp_path: Path) -> None:
    log_file = tmp_path / "requests.jsonl"
    with ModelServer(default=Reply.text("default"), log_file=log_file) as server:
        server.when(last_user_contains("run it"), Reply.bash("ls -la", text="Listing."), times=1)
        status, kind, raw = post(server, "/v1/messages?beta=true", user("please run it"))
        assert status == 200 and kind.startswith("text/event-stream")
        events = sse_events(raw)
        assert [name for name, _ in events] == [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
        assert events[1][1]["content_block"] == {"type": "text", "text": ""}
        assert events[2][1]["delta"] == {"type": "text_delta", "text": "Listing."}
        tool = events[4][1]["content_block"]
        assert tool["type"] == "tool_use" and tool["name"] == "Bash" and tool["id"].startswith("toolu_")
        partial = "".join(e["delta"]["partial_json"] for n, e in events if e.get("delta", {}).get("partial_json"))
        assert json.loads(partial) == {"command": "ls -la", "description": "Run a command"}
        assert events[-2][1]["delta"]["stop_reason"] == "tool_use"

        # times=1: the rule is spent, the default answers.
        _, _, raw = post(server, "/v1/messages?beta=true", user("please run it"))
        assert sse_events(raw)[2][1]["delta"]["text"] == "default"

        # A tool result for that call matches after_tool_call.
        body = user("x")
        body["messages"] = [
            {"role": "user", "content": "please run it"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": tool["id"], "name": "Bash", "input": {"command": "ls -la"}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool["id"], "content": "total 0"}]},
        ]
        assert after_tool_call("Bash", "ls -la")(body)
        assert tail_text(body) == "total 0"

        # Non-streaming requests get a plain JSON message.
        status, kind, raw = post(
            server, "/v1/messages", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        )
        assert status == 200 and json.loads(raw)["content"] == [{"type": "text", "text": "default"}]

    assert [r.rule for r in server.requests()] == ["rule1", "default", "default"]
    assert len(log_file.read_text().splitlines()) == 3


def test_compaction_and_other_endpoints() -> None:
    with ModelServer() as server:
        _, _, raw = post(
            server,
            "/v1/messages?beta=true",
            user("Your task is to create a detailed summary of the conversation so far"),
        )
        text = "".join(e["delta"].get("text", "") for n, e in sse_events(raw) if n == "content_block_delta")
        assert "<summary>" in text and "</summary>" in text

        status, _, raw = post(server, "/v1/messages/count_tokens", user("hello"))
        assert status == 200 and json.loads(raw)["input_tokens"] > 0
        status, _, raw = post(server, "/v1/other", {})
        assert status == 404 and json.loads(raw)["type"] == "error"
        with urllib.request.urlopen(server.base_url + "/", timeout=10) as response:
            assert response.status == 200
        head = urllib.request.Request(server.base_url + "/", method="HEAD")
        with urllib.request.urlopen(head, timeout=10) as response:
            assert response.status == 200
    assert [r.rule for r in server.requests()] == ["compaction", "count_tokens", "unknown", "get", "head"]
    assert not server.errors


def test_a_broken_rule_is_a_500_and_recorded() -> None:
    def explode(body: dict[str, Any]) -> Reply:
        raise RuntimeError("scripted failure")

    with ModelServer(default=explode) as server:
        status, _, raw = post(server, "/v1/messages?beta=true", user("hi"))
    assert status == 500 and "scripted failure" in raw.decode()
    assert server.errors == ["RuntimeError: scripted failure"]
