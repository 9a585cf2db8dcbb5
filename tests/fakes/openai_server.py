"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 for tests.

The code under test talks to it over real HTTP. Replies come from a responder function
``(path, body) -> FakeResponse`` or, when none is given, from a queue filled with ``push``.

    with FakeOpenAIServer() as server:
        server.push(chat_text("hello"), error(429), chat_tool_call("lookup", {"id": 1}))
        client = OpenAIChat(base_url=server.url, model="m")   # url ends with /v1
        ...
        assert server.requests[0].body["model"] == "m"

A ``FaultSchedule`` makes some requests fail before the responder is asked (deterministically:
a fixed list, or a seeded draw per request); ``server.faults`` lists the faults served and
``fault_counts(path_suffix)`` counts them by kind:

    with FakeOpenAIServer(responder, faults=FaultSchedule.seeded(0.2, seed=1)) as server:
        ...
        assert server.fault_counts()["hang"] == ...
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeRequest:
    path: str
    body: Any  # parsed JSON, or raw bytes for multipart uploads
    headers: dict[str, str]


@dataclass(frozen=True)
class FakeFault:
    path: str
    kind: str


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


def chat_omni_audio(
    text: str, audio: bytes, *, audio_format: str | None = None, transcript: str | None = None
) -> FakeResponse:
    """A spoken reply as vLLM-Omni sends it: one choice per output modality, the text in
    ``choices[0].message.content`` and the audio (base64 ``audio``: WAV or raw PCM bytes) in
    ``choices[1].message.audio``."""
    import base64

    spoken: dict[str, Any] = {"id": "audio_1", "data": base64.b64encode(audio).decode("ascii")}
    if audio_format is not None:
        spoken["format"] = audio_format
    if transcript is not None:
        spoken["transcript"] = transcript
    body = _completion({"role": "assistant", "content": text}, 10, 5)
    body["choices"].append(
        {
            "index": 1,
            "message": {"role": "assistant", "content": None, "audio": spoken},
            "finish_reason": "stop",
        }
    )
    return FakeResponse(json_body=body)


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

# Every kind of fault a FaultSchedule can serve.
FAULT_KINDS = ("rate_limit", "server_error", "hang", "malformed_json", "empty_choices")


def fault_response(kind: str, *, hang_s: float = 1.0, retry_after: str = "0") -> FakeResponse:
    """The reply for one fault: 429 with Retry-After, 500, a reply held past the client's
    timeout, a cut-off JSON body, or a completion without choices."""
    if kind == "rate_limit":
        return FakeResponse(
            status=429,
            json_body={"error": {"message": "rate limited"}},
            headers={"Retry-After": retry_after},
        )
    if kind == "server_error":
        return error(500, "scripted fault")
    if kind == "hang":
        return error(503, "answered too late", delay_s=hang_s)
    if kind == "malformed_json":
        return FakeResponse(raw=b'{"choices": [{"message": ', content_type="application/json")
    if kind == "empty_choices":
        return FakeResponse(json_body={"id": "x", "object": "chat.completion", "choices": []})
    raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(FAULT_KINDS)}")


class FaultSchedule:
    """Which POSTs fail, and how, in the order they arrive: a fixed list (``None`` = no fault;
    after its end nothing fails, or it starts again with ``cycle=True``) or ``seeded``: each
    request fails with probability ``rate``, its kind drawn from ``kinds``, from a generator
    seeded with ``seed``. Only requests whose path ends with one of ``paths`` (all when
    None) draw from the schedule."""

    def __init__(
        self,
        pattern: Sequence[str | None] = (),
        *,
        cycle: bool = False,
        paths: Sequence[str] | None = None,
        hang_s: float = 1.0,
        retry_after: str = "0",
    ) -> None:
        for kind in pattern:
            if kind is not None and kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(FAULT_KINDS)}")
        self.pattern = list(pattern)
        self.cycle = cycle
        self.paths = tuple(paths) if paths is not None else None
        self.hang_s = hang_s
        self.retry_after = retry_after
        self._position = 0
        self._draw: Callable[[], str | None] | None = None

    @classmethod
    def seeded(
        cls,
        rate: float,
        *,
        seed: int = 0,
        kinds: Sequence[str] = FAULT_KINDS,
        paths: Sequence[str] | None = None,
        hang_s: float = 1.0,
        retry_after: str = "0",
    ) -> FaultSchedule:
        schedule = cls(paths=paths, hang_s=hang_s, retry_after=retry_after)
        rng = random.Random(seed)
        choices = list(kinds)
        for kind in choices:
            if kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(FAULT_KINDS)}")

        def draw() -> str | None:
            failing = rng.random() < rate
            kind = choices[rng.randrange(len(choices))]
            return kind if failing else None

        schedule._draw = draw
        return schedule

    def applies_to(self, path: str) -> bool:
        return self.paths is None or any(path.endswith(p) for p in self.paths)

    def next_fault(self) -> str | None:
        """The fault for the next request (callers hold the server's lock)."""
        if self._draw is not None:
            return self._draw()
        if self._position >= len(self.pattern):
            if not (self.cycle and self.pattern):
                return None
            self._position = 0
        kind = self.pattern[self._position]
        self._position += 1
        return kind


class FakeOpenAIServer:
    def __init__(
        self,
        responder: Responder | None = None,
        *,
        faults: FaultSchedule | None = None,
        delay_s: float = 0.0,
    ) -> None:
        self.responder = responder
        self.fault_schedule = faults
        self.delay_s = delay_s  # every POST (fault or not) is answered after this long
        # (arrival, departure, status) of every POST, on time.monotonic()
        self.spans: list[tuple[float, float, int]] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self.faults: list[FakeFault] = []  # every fault served, in order
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

    def fault_counts(self, path_suffix: str = "") -> Counter[str]:
        """How many faults of each kind were served (to paths ending with ``path_suffix``)."""
        with self._lock:
            return Counter(f.kind for f in self.faults if f.path.endswith(path_suffix))

    def posts(self, path_suffix: str = "") -> list[FakeRequest]:
        """The POST requests received (whose path ends with ``path_suffix``)."""
        with self._lock:
            return [r for r in self.requests if r.body is not None and r.path.endswith(path_suffix)]

    def _fault(self, path: str) -> FakeResponse | None:
        schedule = self.fault_schedule
        if schedule is None or not schedule.applies_to(path):
            return None
        with self._lock:
            kind = schedule.next_fault()
            if kind is None:
                return None
            self.faults.append(FakeFault(path, kind))
        return fault_response(kind, hang_s=schedule.hang_s, retry_after=schedule.retry_after)

    def _answer(self, path: str, body: Any) -> FakeResponse:
        fault = self._fault(path)
        if fault is not None:
            return fault
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
                arrived = time.monotonic()
                with server._lock:
                    server.requests.append(FakeRequest(self.path, body, dict(self.headers)))
                    server.in_flight += 1
                    server.peak_in_flight = max(server.peak_in_flight, server.in_flight)
                resp = server._answer(self.path, body)
                if resp.delay_s or server.delay_s:
                    time.sleep(resp.delay_s + server.delay_s)
                with server._lock:
                    server.in_flight -= 1
                    server.spans.append((arrived, time.monotonic(), resp.status))
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
