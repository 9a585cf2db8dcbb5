"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 for tests.

The code under test talks to it over real HTTP. Replies come from a responder function
``(path, body) -> FakeResponse`` or, when none is given, from a queue filled with ``push``.

    with FakeOpenAIServer() as server:
        server.push(chat_text("hello"), error(429), chat_tool_call("lookup", {"id": 1}))
        client = OpenAIChat(base_url=server.url, model="m")   # url ends with /v1
        ...
        assert server.requests[0].body["model"] == "m"
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeRequest:
    path: str
    body: Any  # parsed JSON, or raw bytes for multipart uploads
    headers: dict[str, str]


@dataclass
class FakeResponse:
    status: int = 200
    json_body: Any = None
    raw: bytes | None = None
    content_type: str = "application/json"
    delay_s: float = 0.0  # sleep before answering (to trigger client timeouts)
    headers: dict[str, str] = field(default_factory=dict)


def chat_text(text: str, *, prompt_tokens: int = 10, completion_tokens: int = 5) -> FakeResponse:
    return FakeResponse(
        json_body=_completion(
            {"role": "assistant", "content": text}, prompt_tokens, completion_tokens
        )
    )


def chat_tool_call(
    name: str, arguments: dict[str, Any] | str, call_id: str = "call_1"
) -> FakeResponse:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
        ],
    }
    return FakeResponse(json_body=_completion(message, 10, 5, finish="tool_calls"))


def chat_audio(transcript: str, wav: bytes, *, text: str | None = None) -> FakeResponse:
    """A spoken reply as gpt-4o-audio models send it: base64 WAV plus its transcript."""
    import base64

    message = {
        "role": "assistant",
        "content": text,
        "audio": {
            "id": "audio_1",
            "data": base64.b64encode(wav).decode("ascii"),
            "transcript": transcript,
            "expires_at": int(time.time()) + 3600,
        },
    }
    return FakeResponse(json_body=_completion(message, 10, 5))


def error(status: int, message: str = "scripted error", delay_s: float = 0.0) -> FakeResponse:
    return FakeResponse(status=status, json_body={"error": {"message": message}}, delay_s=delay_s)


def _completion(message: dict[str, Any], pt: int, ct: int, finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "fake-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
    }


Responder = Callable[[str, Any], FakeResponse]


class FakeOpenAIServer:
    def __init__(self, responder: Responder | None = None) -> None:
        self.responder = responder
        self.queue: deque[FakeResponse] = deque()
        self.requests: list[FakeRequest] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def push(self, *responses: FakeResponse) -> None:
        with self._lock:
            self.queue.extend(responses)

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def _answer(self, path: str, body: Any) -> FakeResponse:
        if self.responder is not None:
            return self.responder(path, body)
        with self._lock:
            if self.queue:
                return self.queue.popleft()
        return error(500, "fake server: no scripted response left")

    def start(self) -> FakeOpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                # Model listing, as used by clients to check reachability (never scripted).
                with server._lock:
                    server.requests.append(FakeRequest(self.path, None, dict(self.headers)))
                models = {"object": "list", "data": [{"id": "fake-model", "object": "model"}]}
                payload = json.dumps(models).encode()
                self.send_response(200 if self.path.endswith("/models") else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                ctype = self.headers.get("Content-Type", "")
                body: Any = raw
                if "json" in ctype:
                    body = json.loads(raw or b"null")
                with server._lock:
                    server.requests.append(FakeRequest(self.path, body, dict(self.headers)))
                resp = server._answer(self.path, body)
                if resp.delay_s:
                    time.sleep(resp.delay_s)
                payload = resp.raw if resp.raw is not None else json.dumps(resp.json_body).encode()
                try:
                    self.send_response(resp.status)
                    self.send_header("Content-Type", resp.content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    for k, v in resp.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        httpd = self._httpd  # poll often: shutdown() waits up to one poll interval
        self._thread = threading.Thread(
            target=lambda: httpd.serve_forever(poll_interval=0.05), daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
