"""A scripted Anthropic Messages API server for the end-to-end tests.

The real Claude Code CLI is pointed at it with ANTHROPIC_BASE_URL=http://127.0.0.1:PORT. It serves
`POST /v1/messages` (the CLI sends `?beta=true` and always `stream: true`) with SSE streams, chooses each
reply by rules, and logs every request it receives so tests can assert what the model was shown.

    server = ModelServer(default=Reply.text("ok"))
    server.when(last_user_contains("fix the bug"), Reply.bash("pytest -q"), times=1)
    server.when(last_user_contains("pytest"), Reply.text("Fixed: the cause was an off-by-one."))
    with server:
        ...run claude...
    server.main_requests()[-1]          # the last request of the agent loop, parsed JSON

Only stdlib; binds 127.0.0.1 on a free port; one daemon thread per connection.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

JSON = dict[str, Any]
Matcher = Callable[[JSON], bool]

_ids = itertools.count(1)


def _next_id(prefix: str) -> str:
    return f"{prefix}_e2e{next(_ids):06d}"


# --- replies ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextBlock:
    text: str


@dataclass(frozen=True)
class ToolUseBlock:
    name: str
    input: JSON
    id: str = ""


Block = TextBlock | ToolUseBlock


@dataclass(frozen=True)
class Reply:
    """One assistant message: its content blocks and stop reason (derived from the blocks when None)."""

    blocks: tuple[Block, ...]
    stop_reason: str | None = None

    @classmethod
    def text(cls, text: str) -> Reply:
        return cls((TextBlock(text),))

    @classmethod
    def tool(cls, name: str, tool_input: JSON, text: str = "") -> Reply:
        blocks: list[Block] = [TextBlock(text)] if text else []
        blocks.append(ToolUseBlock(name, tool_input))
        return cls(tuple(blocks))

    @classmethod
    def bash(cls, command: str, description: str = "Run a command", text: str = "") -> Reply:
        return cls.tool("Bash", {"command": command, "description": description}, text)

    def resolved_stop_reason(self) -> str:
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if any(isinstance(b, ToolUseBlock) for b in self.blocks) else "end_turn"

    def content(self) -> list[JSON]:
        """The blocks as Messages API content (tool_use ids minted where missing)."""
        out: list[JSON] = []
        for block in self.blocks:
            if isinstance(block, TextBlock):
                out.append({"type": "text", "text": block.text})
            else:
                out.append(
                    {
                        "type": "tool_use",
                        "id": block.id or _next_id("toolu"),
                        "name": block.name,
                        "input": block.input,
                    }
                )
        return out


ReplySource = Reply | Callable[[JSON], Reply]


# --- reading a request ------------------------------------------------------------------------------------


def _block_texts(content: Any) -> Iterator[str]:
    """Every piece of text inside a message's content (strings, text blocks, tool results, tool inputs)."""
    if isinstance(content, str):
        yield content
        return
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, str):
            yield block
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                yield str(block.get("text", ""))
            elif kind == "tool_result":
                yield from _block_texts(block.get("content"))
            elif kind == "tool_use":
                yield json.dumps(block.get("input", {}))


def message_text(message: JSON) -> str:
    return "\n".join(_block_texts(message.get("content")))


def system_text(body: JSON) -> str:
    return "\n".join(_block_texts(body.get("system")))


def request_text(body: JSON) -> str:
    """System prompt plus every message of a request, flattened to text."""
    parts = [system_text(body)]
    parts.extend(message_text(m) for m in body.get("messages", []) if isinstance(m, dict))
    return "\n".join(parts)


def last_user_message(body: JSON) -> JSON | None:
    for message in reversed(body.get("messages", [])):
        if isinstance(message, dict) and message.get("role") == "user":
            return message
    return None


def last_user_text(body: JSON) -> str:
    message = last_user_message(body)
    return message_text(message) if message else ""


def tail_text(body: JSON) -> str:
    """Text of every message after the model last spoke: the new prompt, hook context (which 2.1.332 sends as
    `role: system` messages after the prompt), Stop hook feedback, tool results."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    return "\n".join(message_text(m) for m in messages[last + 1 :])


def has_tool_result(body: JSON) -> bool:
    """True when the last user message carries a tool result (the model is mid-turn, after a tool call)."""
    message = last_user_message(body)
    content = message.get("content") if message else None
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def last_tool_use(body: JSON) -> JSON | None:
    """The newest tool_use block the model sent (in the conversation the request carries)."""
    for message in reversed(body.get("messages", [])):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, list):
            for block in reversed(content):
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    return block
        return None
    return None


_COMPACTION_MARKERS = (
    "create a detailed summary of the conversation",
    "Your task is to create a detailed summary",
)


def is_compaction(body: JSON) -> bool:
    """A summarisation request from /compact or auto-compaction."""
    text = last_user_text(body)
    return any(marker in text for marker in _COMPACTION_MARKERS)


def is_main_loop(body: JSON) -> bool:
    """A request of the agent loop itself (it offers tools), as opposed to side queries of the CLI."""
    return bool(body.get("tools")) and not is_compaction(body)


# --- matchers -----------------------------------------------------------------------------------------------


def last_user_contains(needle: str) -> Matcher:
    return lambda body: needle in last_user_text(body)


def last_user_matches(pattern: str) -> Matcher:
    regex = re.compile(pattern)
    return lambda body: regex.search(last_user_text(body)) is not None


def tail_contains(needle: str) -> Matcher:
    return lambda body: needle in tail_text(body)


def request_contains(needle: str) -> Matcher:
    return lambda body: needle in request_text(body)


def after_tool_result(needle: str = "") -> Matcher:
    """The last user message holds a tool result (whose text contains needle, when given)."""
    return lambda body: has_tool_result(body) and needle in last_user_text(body)


def after_tool_call(name: str, input_contains: str = "") -> Matcher:
    """The model's last message called tool `name` (its input containing input_contains) and this request
    carries the result."""

    def match(body: JSON) -> bool:
        use = last_tool_use(body)
        return (
            has_tool_result(body)
            and use is not None
            and use.get("name") == name
            and input_contains in json.dumps(use.get("input", {}))
        )

    return match


def main_loop(matcher: Matcher | None = None) -> Matcher:
    return lambda body: is_main_loop(body) and (matcher is None or matcher(body))


# Claude Code 2.1.332 marks a subagent's requests in the billing line that opens the system prompt.
SUBAGENT_MARK = "cc_is_subagent=true"


def is_subagent(body: JSON) -> bool:
    """A request of a subagent's loop (the Agent tool's), as opposed to the main conversation's."""
    return SUBAGENT_MARK in system_text(body)


def first_user_text(body: JSON) -> str:
    """The conversation's first user message: for a subagent, the task its parent wrote (as the hooks left it)."""
    for message in body.get("messages", []):
        if isinstance(message, dict) and message.get("role") == "user":
            return message_text(message)
    return ""


def has_replied(body: JSON) -> bool:
    """The model has spoken before in this conversation (False on its first request)."""
    return any(isinstance(m, dict) and m.get("role") == "assistant" for m in body.get("messages", []))


def subagent(matcher: Matcher | None = None) -> Matcher:
    return lambda body: is_main_loop(body) and is_subagent(body) and (matcher is None or matcher(body))


def main_agent(matcher: Matcher | None = None) -> Matcher:
    """The main conversation's loop only (no subagent, no side query)."""
    return lambda body: is_main_loop(body) and not is_subagent(body) and (matcher is None or matcher(body))


def all_of(*matchers: Matcher) -> Matcher:
    return lambda body: all(m(body) for m in matchers)


# --- rules and the log ------------------------------------------------------------------------------------


@dataclass
class Rule:
    when: Matcher
    reply: ReplySource
    times: int | None = None  # None: unlimited
    name: str = ""
    hits: int = 0

    def live(self) -> bool:
        return self.times is None or self.hits < self.times


@dataclass
class LoggedRequest:
    """One HTTP request the server received, and what it answered."""

    seq: int
    at: float
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: JSON | None
    rule: str = ""
    reply: list[JSON] = field(default_factory=list)
    status: int = 200

    @property
    def is_messages(self) -> bool:
        return self.method == "POST" and self.path == "/v1/messages"

    def to_json(self) -> JSON:
        return {
            "seq": self.seq,
            "at": self.at,
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "headers": self.headers,
            "body": self.body,
            "rule": self.rule,
            "reply": self.reply,
            "status": self.status,
        }


_SUMMARY_REPLY = Reply.text(
    "<analysis>Scripted compaction.</analysis>\n<summary>1. Primary Request and Intent: scripted e2e session."
    "\n2. Current work: none pending.</summary>"
)

# Headers worth keeping in the log (never anything secret-looking: the key is a dummy anyway).
_KEPT_HEADERS = ("user-agent", "anthropic-beta", "anthropic-version", "x-app", "content-type")


class ModelServer:
    """The scripted server. Use as a context manager, or call start()/stop()."""

    def __init__(self, default: ReplySource | None = None, log_file: Path | None = None) -> None:
        self.default: ReplySource = default or Reply.text("OK.")
        self.rules: list[Rule] = []
        self.log: list[LoggedRequest] = []
        self.log_file = log_file
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._seq = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        # Summaries first, so scripted rules that look for words in the conversation never answer /compact.
        self.when(is_compaction, _SUMMARY_REPLY, name="compaction")

    # -- scripting ------------------------------------------------------------------------------------------
    def when(self, matcher: Matcher, reply: ReplySource, times: int | None = None, name: str = "") -> Rule:
        """Add a rule; rules are tried in the order added, the first live match answers."""
        rule = Rule(matcher, reply, times, name or f"rule{len(self.rules)}")
        with self._lock:
            self.rules.append(rule)
        return rule

    def script(self, rules: Iterable[tuple[Matcher, ReplySource]]) -> None:
        for matcher, reply in rules:
            self.when(matcher, reply)

    def choose(self, body: JSON) -> tuple[str, Reply]:
        with self._lock:
            for rule in self.rules:
                if rule.live() and rule.when(body):
                    rule.hits += 1
                    source, name = rule.reply, rule.name
                    break
            else:
                source, name = self.default, "default"
        reply = source(body) if callable(source) else source
        return name, reply

    # -- reading the log ------------------------------------------------------------------------------------
    def requests(self) -> list[LoggedRequest]:
        with self._lock:
            return list(self.log)

    def messages(self) -> list[JSON]:
        """Bodies of every POST /v1/messages, in arrival order."""
        return [r.body for r in self.requests() if r.is_messages and r.body is not None]

    def main_requests(self) -> list[JSON]:
        """Bodies of the agent loop's requests (those offering tools; not compaction, not side queries)."""
        return [b for b in self.messages() if is_main_loop(b)]

    def mark(self) -> int:
        """The sequence number of the newest logged request (0 when none); pair with bodies_since()."""
        with self._lock:
            return self.log[-1].seq if self.log else 0

    def bodies_since(self, mark: int) -> list[JSON]:
        """Bodies of the POST /v1/messages logged after mark()."""
        return [r.body for r in self.requests() if r.seq > mark and r.is_messages and r.body is not None]

    # -- lifecycle ------------------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        handler = type("BoundHandler", (_Handler,), {"model_server": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- called by the handler ------------------------------------------------------------------------------
    def record(self, entry: LoggedRequest) -> None:
        with self._lock:
            self.log.append(entry)
            if self.log_file is not None:
                with self.log_file.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(entry.to_json()) + "\n")

    def new_entry(self, handler: BaseHTTPRequestHandler, body: JSON | None) -> LoggedRequest:
        parts = urlsplit(handler.path)
        headers = {k.lower(): v for k, v in handler.headers.items() if k.lower() in _KEPT_HEADERS}
        return LoggedRequest(
            seq=next(self._seq),
            at=time.time(),
            method=handler.command,
            path=parts.path,
            query=parse_qs(parts.query),
            headers=headers,
            body=body,
        )


# --- HTTP ---------------------------------------------------------------------------------------------------


def _sse(event: str, data: JSON) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _approx_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


def render_stream(reply: Reply, model: str, input_tokens: int) -> tuple[bytes, list[JSON]]:
    """The SSE byte stream for one reply, and the content it carried (for the log)."""
    content = reply.content()
    chunks = [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": _next_id("msg"),
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": input_tokens,
                        "output_tokens": 1,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                    },
                },
            },
        )
    ]
    for index, block in enumerate(content):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": block["text"]}]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            raw = json.dumps(block["input"])
            # Two fragments, as the real API streams partial JSON.
            cut = len(raw) // 2
            deltas = [{"type": "input_json_delta", "partial_json": part} for part in (raw[:cut], raw[cut:]) if part]
        chunks.append(
            _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        )
        chunks.extend(
            _sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas
        )
        chunks.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    chunks.append(
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.resolved_stop_reason(), "stop_sequence": None},
                "usage": {"output_tokens": _approx_tokens(content)},
            },
        )
    )
    chunks.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(chunks), content


class _Handler(BaseHTTPRequestHandler):
    model_server: ModelServer
    protocol_version = "HTTP/1.1"
    server_version = "gate-e2e-model/1"

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr access log
        return

    def _read_body(self) -> JSON | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {"_raw": raw.decode("utf-8", "replace")}
        return parsed if isinstance(parsed, dict) else {"_json": parsed}

    def _record_once(self) -> None:
        """Log the request before its response goes out: a client that sends its next request as soon as it has
        this response must find this one logged first (the log's order is the order of the conversation)."""
        entry = getattr(self, "_entry", None)
        if entry is not None:
            self._entry = None
            self.model_server.record(entry)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self._record_once()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("request-id", _next_id("req"))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_json(self, status: int, payload: JSON) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json")

    def do_POST(self) -> None:
        server = self.model_server
        body = self._read_body()
        entry = self._entry = server.new_entry(self, body)
        try:
            if entry.path == "/v1/messages" and body is not None and "messages" in body:
                entry.rule, reply = server.choose(body)
                model = str(body.get("model") or "claude-scripted")
                tokens = _approx_tokens(body)
                if body.get("stream"):
                    payload, entry.reply = render_stream(reply, model, tokens)
                    self._send(200, payload, "text/event-stream; charset=utf-8")
                else:
                    entry.reply = reply.content()
                    self._send_json(
                        200,
                        {
                            "id": _next_id("msg"),
                            "type": "message",
                            "role": "assistant",
                            "model": model,
                            "content": entry.reply,
                            "stop_reason": reply.resolved_stop_reason(),
                            "stop_sequence": None,
                            "usage": {"input_tokens": tokens, "output_tokens": _approx_tokens(entry.reply)},
                        },
                    )
            elif entry.path == "/v1/messages/count_tokens":
                entry.rule = "count_tokens"
                self._send_json(200, {"input_tokens": _approx_tokens(body)})
            else:
                entry.rule, entry.status = "unknown", 404
                self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not scripted"}})
        except Exception as error:  # a broken rule must show up in the test, not hang the CLI
            server.errors.append(f"{type(error).__name__}: {error}")
            entry.rule, entry.status = f"error: {error}", 500
            self._send_json(500, {"type": "error", "error": {"type": "api_error", "message": str(error)}})
        finally:
            self._record_once()  # when nothing was sent

    def do_GET(self) -> None:
        entry = self._entry = self.model_server.new_entry(self, None)
        entry.rule = "get"
        self._send_json(200, {})

    def do_HEAD(self) -> None:
        entry = self._entry = self.model_server.new_entry(self, None)
        entry.rule = "head"
        self._send(200, b"", "application/json")
