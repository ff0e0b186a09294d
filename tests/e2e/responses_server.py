"""A scripted OpenAI Responses API server for the Codex CLI end-to-end tests (tests/e2e/test_codex_*.py).

The real Codex CLI is pointed at it through a custom model provider (base_url http://127.0.0.1:PORT/v1,
wire_api "responses"). It serves `POST /v1/responses` with SSE streams (response.created, one
response.output_item.done per output item, response.completed), chooses each reply by rules tried in order,
and logs every request so tests can assert what the model was shown.

    server = ResponsesServer(default=Turn.text("ok"))
    server.when(last_user_contains("fix the bug"), Turn.shell("pytest -q"), times=1)
    with server:
        ...run codex exec...

Only stdlib; binds 127.0.0.1 on a free port; one daemon thread per connection.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

JSON = dict[str, Any]
Matcher = Callable[[JSON], bool]
_ids = itertools.count(1)


def _next_id(prefix: str) -> str:
    return f"{prefix}_e2e{next(_ids):06d}"


@dataclass(frozen=True)
class Turn:
    """The output items of one model response."""

    items: tuple[JSON, ...]

    @classmethod
    def text(cls, text: str) -> Turn:
        return cls(({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]},))

    @classmethod
    def call(cls, name: str, arguments: JSON) -> Turn:
        """A function call (e.g. exec_command with {"cmd": ...}), its arguments JSON-encoded as the API sends them."""
        return cls(({"type": "function_call", "name": name, "arguments": json.dumps(arguments)},))

    @classmethod
    def custom(cls, name: str, text: str) -> Turn:
        """A freeform (custom) tool call, as Codex's apply_patch is offered: its input is the patch text."""
        return cls(({"type": "custom_tool_call", "name": name, "input": text},))


ReplySource = Turn | Callable[[JSON], Turn]


# --- reading a request -----------------------------------------------------------------------------------------


def item_texts(item: Any) -> list[str]:
    """The text an input item carries: message content, a call's arguments or input, a call's output."""
    if not isinstance(item, dict):
        return []
    out: list[str] = []
    content = item.get("content")
    if isinstance(content, str):
        out.append(content)
    elif isinstance(content, list):
        out += [part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)]
    for key in ("arguments", "input", "output"):
        value = item.get(key)
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            out += [p["text"] for p in value if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return out


def request_text(body: JSON) -> str:
    parts = [str(body.get("instructions") or "")]
    for item in body.get("input") or []:
        parts += item_texts(item)
    return "\n".join(parts)


def messages_of(body: JSON, role: str) -> list[str]:
    return ["\n".join(item_texts(item)) for item in body.get("input") or []
            if isinstance(item, dict) and item.get("type", "message") == "message" and item.get("role") == role]


def last_user_text(body: JSON) -> str:
    users = messages_of(body, "user")
    return users[-1] if users else ""


def last_item(body: JSON) -> JSON:
    items = body.get("input") or []
    return items[-1] if items and isinstance(items[-1], dict) else {}


def last_user_contains(needle: str) -> Matcher:
    return lambda body: needle in last_user_text(body) and not last_item(body).get("type", "").endswith("_output")


def after_output(needle: str = "") -> Matcher:
    """The request right after a tool call's output that contains `needle`."""

    def match(body: JSON) -> bool:
        item = last_item(body)
        return item.get("type", "").endswith("_output") and needle in "\n".join(item_texts(item))

    return match


# --- the server ------------------------------------------------------------------------------------------------


@dataclass
class Rule:
    when: Matcher
    reply: ReplySource
    times: int | None = None
    name: str = ""
    hits: int = 0

    def live(self) -> bool:
        return self.times is None or self.hits < self.times


@dataclass
class Logged:
    path: str
    body: JSON | None
    rule: str = ""
    reply: list[JSON] = field(default_factory=list)


class ResponsesServer:
    def __init__(self, default: ReplySource | None = None) -> None:
        self.default: ReplySource = default or Turn.text("OK.")
        # The input tokens each response reports: past the CLI's auto-compact limit, it compacts the context.
        self.input_tokens = 10
        self.rules: list[Rule] = []
        self.log: list[Logged] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def when(self, matcher: Matcher, reply: ReplySource, times: int | None = None, name: str = "") -> Rule:
        rule = Rule(matcher, reply, times, name or f"rule{len(self.rules)}")
        with self._lock:
            self.rules.append(rule)
        return rule

    def choose(self, body: JSON) -> tuple[str, Turn]:
        with self._lock:
            for rule in self.rules:
                if rule.live() and rule.when(body):
                    rule.hits += 1
                    source, name = rule.reply, rule.name
                    break
            else:
                source, name = self.default, "default"
        return name, source(body) if callable(source) else source

    def bodies(self) -> list[JSON]:
        with self._lock:
            return [entry.body for entry in self.log if entry.path.endswith("/responses") and entry.body]

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> Self:
        handler = type("BoundHandler", (_Handler,), {"server_ref": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="responses-server", daemon=True)
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


def _sse(event: JSON) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    server_ref: ResponsesServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # models list and the like: nothing to offer
        entry = Logged(self.path, None)
        with self.server_ref._lock:
            self.server_ref.log.append(entry)
        body = b'{"data": [], "models": []}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("content-encoding") == "zstd":
            body = None  # not expected: the provider is configured without compression
        else:
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
        entry = Logged(self.path.split("?")[0], body)
        with self.server_ref._lock:
            self.server_ref.log.append(entry)
        if not self.path.split("?")[0].endswith("/responses") or not isinstance(body, dict):
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        name, turn = self.server_ref.choose(body)
        response_id = _next_id("resp")
        items = []
        for item in turn.items:
            item = dict(item)
            item.setdefault("id", _next_id("item"))
            if item["type"] in ("function_call", "custom_tool_call"):
                item.setdefault("call_id", _next_id("call"))
                item.setdefault("status", "completed")
            items.append(item)
        entry.rule, entry.reply = name, items
        events = [{"type": "response.created", "response": {"id": response_id}}]
        events += [{"type": "response.output_item.done", "output_index": i, "item": item}
                   for i, item in enumerate(items)]
        events.append({"type": "response.completed", "response": {
            "id": response_id, "usage": {"input_tokens": self.server_ref.input_tokens,
                                         "input_tokens_details": {"cached_tokens": 0},
                                         "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                                         "total_tokens": self.server_ref.input_tokens + 5}}})
        payload = b"".join(_sse(event) for event in events)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
