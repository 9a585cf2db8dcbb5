"""Scenario tools served to an external agent, per call, over MCP and plain HTTP
(docs/mcp-tools.md).

One server per process listens on 127.0.0.1 (started on first use). Each call registers its
own ``ToolRuntime`` and gets a fresh bearer token; the token selects the call, so concurrent
calls never see each other's database, and every tool call lands in that call's tool log and
final database exactly as a call made through the bridge would. Revoking the token (when the
call ends) makes every later request a 401.

Ways in, all under the same token (``Authorization: Bearer TOKEN``):

* ``/mcp``: the MCP streamable HTTP transport (the official ``mcp`` SDK; ``tools/list`` and
  ``tools/call``). A refused call (bad arguments, failed precondition) is an MCP tool result
  with ``isError`` and the runtime's error object as JSON text.
* ``GET /openapi.json``: an OpenAPI 3.1 description of the call's tools; ``POST
  /tools/{name}`` with the arguments as a JSON object answers the tool's result (200) or its
  error object (422 for refused arguments, 409 for a failed precondition).

The ``mcp`` extra (``pip install voxeval[mcp]``) provides the SDK, uvicorn and starlette.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject, JSONValue

if TYPE_CHECKING:
    import uvicorn
    from mcp.server.context import ServerRequestContext
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

    from voxeval.benchmarks.tools import ToolRuntime
    from voxeval.benchmarks.tools.tool_call import ToolCallRecord

MCP_PATH = "/mcp"


@dataclass(frozen=True)
class ToolGrant:
    """What an agent needs to reach one call's tools: the addresses and the call's token."""

    token: str
    mcp_url: str
    openapi_url: str
    http_base: str  # POST {http_base}/{tool name}

    def as_metadata(self) -> dict[str, str]:
        """Flat string fields, as a call's start metadata carries them."""
        return {
            "voxeval_tools_token": self.token,
            "voxeval_tools_mcp_url": self.mcp_url,
            "voxeval_tools_openapi_url": self.openapi_url,
            "voxeval_tools_http_base": self.http_base,
        }


@dataclass
class _CallTools:
    runtime: ToolRuntime
    scenario_id: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    # monotonic time of each call made through the service, by record id (the engine's
    # timeline places tool events by these when the agent reports no times)
    stamps: dict[int, float] = field(default_factory=dict)
    taken: int = 0  # records already handed to the engine (``records_since``)
    closed: bool = False  # the call ended: its database is final

    def call(
        self, name: str, arguments: Mapping[str, JSONValue] | str | None
    ) -> ToolCallRecord | None:
        """Run the tool on this call's database (None once the call has ended)."""
        with self.lock:
            if self.closed:
                return None
            record = self.runtime.call(name, arguments)
            self.stamps[id(record)] = time.monotonic()
            return record


class ToolService:
    """The per-process server; ``register`` a call's runtime, ``revoke`` it when the call
    ends."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host, self.port = host, port
        self._calls: dict[str, _CallTools] = {}
        self._lock = threading.Lock()
        self._server: Any = None
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- calls
    def register(self, runtime: ToolRuntime, scenario_id: str) -> ToolGrant:
        """Serve ``runtime`` under a new token; start the server on first use."""
        base = self.start()
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._calls[token] = _CallTools(runtime, scenario_id)
        return ToolGrant(token, base + MCP_PATH, base + "/openapi.json", base + "/tools")

    def revoke(self, token: str) -> None:
        """End the call's access; returns once a tool call in progress has finished, so the
        call's final database includes it and nothing changes it afterwards."""
        with self._lock:
            entry = self._calls.pop(token, None)
        if entry is not None:
            with entry.lock:
                entry.closed = True

    def records_since(self, token: str) -> list[ToolCallRecord]:
        """The tool calls this call made through the service since the last ask, in order
        (an agent that calls out of band reports them nowhere else)."""
        with self._lock:
            entry = self._calls.get(token)
        if entry is None:
            return []
        with entry.lock:
            served = [r for r in entry.runtime.log if id(r) in entry.stamps]
            new, entry.taken = served[entry.taken :], len(served)
        return new

    def _call_for(self, token: str | None) -> _CallTools | None:
        if not token:
            return None
        with self._lock:
            return self._calls.get(token)

    # ---------------------------------------------------------------- server
    def start(self) -> str:
        """Start the server (idempotent) and return its base URL."""
        with self._lock:
            if self._server is None:
                self._server, self._thread = _serve(self._app(), self.host, self.port)
            sock = self._server.servers[0].sockets[0]
            return f"http://{self.host}:{sock.getsockname()[1]}"

    def stop(self) -> None:
        with self._lock:
            server, thread = self._server, self._thread
            self._server = self._thread = None
        if server is not None and thread is not None:
            server.should_exit = True
            thread.join(timeout=10)

    def _app(self) -> Starlette:
        try:
            import mcp_types as types
            from mcp.server.auth.middleware.auth_context import get_access_token
            from mcp.server.auth.provider import AccessToken
            from mcp.server.auth.settings import AuthSettings
            from mcp.server.lowlevel import Server
            from starlette.routing import Route
        except ImportError as exc:
            raise ConfigError(
                "the scenario tool service needs the mcp extra: pip install 'voxeval[mcp]'"
            ) from exc
        service = self

        class CallTokens:
            """A bearer token is valid while its call is registered."""

            async def verify_token(self, token: str) -> AccessToken | None:
                entry = service._call_for(token)
                if entry is None:
                    return None
                return AccessToken(token=token, client_id=entry.scenario_id, scopes=[])

        def current() -> _CallTools:
            access = get_access_token()
            entry = service._call_for(access.token if access else None)
            if entry is None:  # revoked between the middleware and the handler
                raise PermissionError("the call's tool token is no longer valid")
            return entry

        async def list_tools(
            ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            runtime = current().runtime
            return types.ListToolsResult(
                tools=[
                    types.Tool(
                        name=spec.name,
                        description=spec.description or None,
                        input_schema=spec.parameters,
                    )
                    for spec in runtime.tools.values()
                ]
            )

        async def call_tool(
            ctx: ServerRequestContext, params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            record = current().call(params.name, params.arguments or {})
            if record is None:
                raise PermissionError("the call has ended")
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=json.dumps(record.result))],
                structured_content=record.result if isinstance(record.result, dict) else None,
                is_error=record.error is not None,
            )

        server = Server("voxeval-scenario-tools", on_list_tools=list_tools, on_call_tool=call_tool)
        app = server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            json_response=True,
            stateless_http=True,
            host=self.host,
            auth=AuthSettings(
                issuer_url=f"http://{self.host}",  # type: ignore[arg-type]
                resource_server_url=None,
            ),
            token_verifier=CallTokens(),
            custom_starlette_routes=[
                Route("/openapi.json", self._openapi, methods=["GET"]),
                Route("/tools/{name}", self._http_call, methods=["POST"]),
            ],
        )
        return app

    # ---------------------------------------------------------------- plain HTTP
    def _bearer(self, request: Request) -> _CallTools | None:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        return self._call_for(token.strip()) if scheme.lower() == "bearer" else None

    async def _openapi(self, request: Request) -> Response:
        from starlette.responses import JSONResponse

        entry = self._bearer(request)
        if entry is None:
            return _unauthorized()
        return JSONResponse(openapi_description(entry.runtime, entry.scenario_id))

    async def _http_call(self, request: Request) -> Response:
        from starlette.responses import JSONResponse

        entry = self._bearer(request)
        if entry is None:
            return _unauthorized()
        try:
            arguments = await request.json()
        except ValueError:
            return JSONResponse(
                {"status": "error", "error": "invalid_json", "message": "body is not JSON"}, 400
            )
        name = request.path_params["name"]
        if name not in entry.runtime.tools:
            return JSONResponse(
                {"status": "error", "error": "unknown_tool", "message": f"no tool {name!r}"}, 404
            )
        record = entry.call(name, arguments if arguments is not None else {})
        if record is None:
            return _unauthorized()
        status = 200 if record.error is None else 422 if not record.valid else 409
        return JSONResponse(record.result, status)


def openapi_description(runtime: ToolRuntime, scenario_id: str) -> JSONObject:
    """OpenAPI 3.1 for one call's tools: one POST operation per tool, its JSON schema as the
    request body, bearer authentication."""
    paths: dict[str, Any] = {}
    for spec in runtime.tools.values():
        paths[f"/tools/{spec.name}"] = {
            "post": {
                "operationId": spec.name,
                "summary": spec.description or spec.name,
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": spec.parameters}},
                },
                "responses": {
                    "200": {"description": "the tool's result"},
                    "401": {"description": "missing, wrong or expired call token"},
                    "409": {"description": "refused by the tool (error object)"},
                    "422": {"description": "arguments do not match the schema (error object)"},
                },
            }
        }
    return {
        "openapi": "3.1.0",
        "info": {"title": f"voxeval scenario tools ({scenario_id})", "version": "1"},
        "components": {"securitySchemes": {"call": {"type": "http", "scheme": "bearer"}}},
        "security": [{"call": []}],
        "paths": paths,
    }


def _unauthorized() -> Response:
    from starlette.responses import JSONResponse

    return JSONResponse(
        {"status": "error", "error": "unauthorized", "message": "missing or wrong call token"},
        401,
        headers={"WWW-Authenticate": "Bearer"},
    )


def _serve(app: Starlette, host: str, port: int) -> tuple[uvicorn.Server, threading.Thread]:
    """Run ``app`` with uvicorn in a daemon thread; return once it listens."""
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True, name="voxeval-tool-service")
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the scenario tool service did not start on {host}:{port}")
        time.sleep(0.01)
    return server, thread


_SHARED: ToolService | None = None
_SHARED_LOCK = threading.Lock()


def shared_tool_service() -> ToolService:
    """The process's tool service (one server for every call)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = ToolService()
        return _SHARED
