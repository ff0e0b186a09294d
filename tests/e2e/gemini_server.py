"""A scripted Gemini API server for the Gemini CLI end-to-end tests (tests/e2e/test_gemini.py).

The real Gemini CLI is pointed at it with GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT and GEMINI_API_KEY. It
serves:
- `POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`: the agent's turns, as SSE (one `data:` event with
  the whole candidate), the reply chosen by rules tried in order (as responses_server.py does for Codex);
- `POST /v1beta/models/MODEL:generateContent`: the CLI's side questions that ask for JSON by a schema (the
  router's complexity score before a prompt, the next-speaker check): each required field filled from the schema,
  so the CLI goes on with its default model and stops after a reply;
- `POST …:countTokens`: a small count.
Every request is logged so tests can assert what the model was shown.

Only stdlib; binds 127.0.0.1 on a free port; one daemon thread per connection.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

JSON = dict[str, Any]
Matcher = Callable[[JSON], bool]


@dataclass(frozen=True)
class Turn:
    """The parts of one model reply."""

    parts: tuple[JSON, ...]

    @classmethod
    def text(cls, text: str) -> Turn:
        return cls(({"text": text},))

    @classmethod
    def call(cls, name: str, args: JSON) -> Turn:
        """A function call (e.g. run_shell_command with {"command": ...})."""
        return cls(({"functionCall": {"name": name, "args": args}},))


ReplySource = Turn | Callable[[JSON], Turn]


# --- reading a request -----------------------------------------------------------------------------------------


def part_texts(part: Any) -> list[str]:
    """The text a part carries: its text, a call's arguments, a function response."""
    if not isinstance(part, dict):
        return []
    out: list[str] = []
    if isinstance(part.get("text"), str):
        out.append(part["text"])
    for key in ("functionCall", "functionResponse"):
        if isinstance(part.get(key), dict):
            out.append(json.dumps(part[key]))
    return out


def content_text(content: Any) -> str:
    parts = content.get("parts") if isinstance(content, dict) else None
    return "\n".join(text for part in parts or [] for text in part_texts(part))


def request_text(body: JSON) -> str:
    texts = [content_text(body.get("systemInstruction") or {})]
    texts += [content_text(content) for content in body.get("contents") or []]
    return "\n".join(texts)


def last_content(body: JSON) -> JSON:
    contents = body.get("contents") or []
    return contents[-1] if contents and isinstance(contents[-1], dict) else {}


def is_function_response(content: JSON) -> bool:
    return any(isinstance(p, dict) and "functionResponse" in p for p in content.get("parts") or [])


def last_user_contains(needle: str) -> Matcher:
    """The request whose last content is the user's own text holding `needle` (not a tool's response)."""
    def match(body: JSON) -> bool:
        last = last_content(body)
        return last.get("role") == "user" and not is_function_response(last) and needle in content_text(last)

    return match


def after_output(needle: str = "") -> Matcher:
    """The request right after a tool call's response that contains `needle`."""

    def match(body: JSON) -> bool:
        last = last_content(body)
        return is_function_response(last) and needle in content_text(last)

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


def _filled(schema: Any) -> Any:
    """A value for a JSON schema: its required fields filled (the next speaker is the user: the turn ends)."""
    if not isinstance(schema, dict):
        return "scripted"
    kind = str(schema.get("type", "")).lower()
    if schema.get("enum"):
        values = list(schema["enum"])
        return "user" if "user" in values else values[0]
    if kind == "object":
        props = schema.get("properties") or {}
        return {key: _filled(props.get(key)) for key in schema.get("required") or list(props)}
    if kind in ("number", "integer"):
        return 10
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    return "scripted"


class GeminiServer:
    def __init__(self, default: ReplySource | None = None) -> None:
        self.default: ReplySource = default or Turn.text("OK.")
        self.rules: list[Rule] = []
        self.log: list[Logged] = []
        self.errors: list[str] = []
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
        """The agent's requests (streamGenerateContent), in order."""
        with self._lock:
            return [entry.body for entry in self.log if ":streamGenerateContent" in entry.path and entry.body]

    def side_paths(self) -> list[str]:
        with self._lock:
            return [entry.path for entry in self.log if ":streamGenerateContent" not in entry.path]

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        handler = type("BoundHandler", (_Handler,), {"server_ref": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="gemini-server", daemon=True)
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


USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


class _Handler(BaseHTTPRequestHandler):
    server_ref: GeminiServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # a models list and the like: nothing to offer
        with self.server_ref._lock:
            self.server_ref.log.append(Logged(self.path, None))
        self._send(200, b'{"models": []}')

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = self.path.split("?")[0]
        entry = Logged(path, body)
        with self.server_ref._lock:
            self.server_ref.log.append(entry)
        if not isinstance(body, dict):
            self.server_ref.errors.append(f"unreadable body at {path}")
            self._send(400, b'{"error": {"code": 400, "message": "unreadable body"}}')
            return
        if path.endswith(":countTokens"):
            self._send(200, b'{"totalTokens": 10}')
            return
        if path.endswith(":generateContent"):
            config = body.get("generationConfig") or {}
            schema = config.get("responseJsonSchema") or config.get("responseSchema")
            text = json.dumps(_filled(schema)) if schema else "OK."
            entry.rule = "side"
            answer = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                      "finishReason": "STOP", "index": 0}], "usageMetadata": USAGE}
            self._send(200, json.dumps(answer).encode())
            return
        if not path.endswith(":streamGenerateContent"):
            self.server_ref.errors.append(f"unexpected POST {path}")
            self._send(404, b'{"error": {"code": 404, "message": "not scripted"}}')
            return
        name, turn = self.server_ref.choose(body)
        entry.rule, entry.reply = name, list(turn.parts)
        chunk = {"candidates": [{"content": {"role": "model", "parts": list(turn.parts)}, "finishReason": "STOP",
                                 "index": 0}], "usageMetadata": USAGE, "modelVersion": "gemini-2.5-pro"}
        self._send(200, f"data: {json.dumps(chunk)}\r\n\r\n".encode(), "text/event-stream")
