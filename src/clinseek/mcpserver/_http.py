"""The HTTP mode: many episodes behind one streamable-HTTP endpoint, each reached with its own bearer token.

Built from the SDK's pieces: its streamable-HTTP session manager in stateless mode (the 2026 protocol
has no session; legacy clients get a fresh transport per request, so any replica can answer and no
per-connection state piles up), its bearer-token middleware with a :class:`TokenVerifier` over the token
file, and the server of :func:`~clinseek.mcpserver.episode_server` whose episode source reads the
request's verified token. Around them: a per-token rate limit (HTTP 429 with ``Retry-After``), the body
size cap of the SDK (4 MiB), and the :class:`~clinseek.mcpserver.EpisodePool` (bounded, idle episodes closed).

Every tool is read-only towards the store and the server's files; the one state a client can change is
the episode's own session state (``ehr.finish``'s answer, ``ehr.think``'s notes, the browser's pages),
shared by the clients of one token and gone when the episode closes.
"""

from __future__ import annotations

import logging
import math
import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware, get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import ClinseekError
from ._pool import EpisodePool, PoolBusy
from ._server import Served, episode_server
from ._spec import open_spec
from ._tokens import TokenRecord, TokenStore

logger = logging.getLogger(__name__)

_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """How the HTTP mode serves.

    Attributes:
        max_open: episodes open at once at most (each holds its DuckDB episode; memory grows with it).
        idle_close_s: an episode no request used for this long is closed (reopened on its next request).
        rate_per_s: requests per second per token, on average.
        burst: requests a token may send at once before the rate applies.
        path: the MCP endpoint.
        host: the interface served; on a loopback interface the Host and Origin headers must be loopback
            too (the SDK's DNS-rebinding protection).
    """

    max_open: int = 16
    idle_close_s: float = 300.0
    rate_per_s: float = 20.0
    burst: int = 40
    path: str = "/mcp"
    host: str = "127.0.0.1"


class RateLimiter:
    """A token bucket per key: ``burst`` requests at once, then ``rate_per_s`` a second.

    Raises:
        ClinseekError: a rate or burst that is not positive.
    """

    def __init__(self, rate_per_s: float, burst: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if not (rate_per_s > 0 and burst >= 1 and math.isfinite(rate_per_s)):
            raise ClinseekError(f"rate {rate_per_s}/s with burst {burst}: both must be positive")
        self.rate, self.burst, self.clock = rate_per_s, float(burst), clock
        self._buckets: dict[str, tuple[float, float]] = {}

    def wait_s(self, key: str) -> float:
        """0 when ``key`` may send a request now (it is counted), else the seconds until it may."""
        now = self.clock()
        level, then = self._buckets.get(key, (self.burst, now))
        level = min(self.burst, level + (now - then) * self.rate)
        if level >= 1.0:
            self._buckets[key] = (level - 1.0, now)
            return 0.0
        self._buckets[key] = (level, now)
        return (1.0 - level) / self.rate


class _RateLimited:
    """ASGI: a request over its token's rate gets 429 with ``Retry-After`` (after authentication)."""

    def __init__(self, app: ASGIApp, limiter: RateLimiter) -> None:
        self.app, self.limiter = app, limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        wait = self.limiter.wait_s(user.access_token.client_id) if isinstance(user, AuthenticatedUser) else 0.0
        if wait <= 0:
            await self.app(scope, receive, send)
            return
        body = b'{"error": "rate_limited", "error_description": "too many requests for this token"}'
        await send({"type": "http.response.start", "status": 429, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"retry-after", str(max(1, math.ceil(wait))).encode())]})
        await send({"type": "http.response.body", "body": body})


class _Verifier:
    """The SDK's ``TokenVerifier`` over the token file: a token is valid while its record is there and unexpired."""

    def __init__(self, tokens: TokenStore) -> None:
        self.tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        record = self.tokens.lookup(token)
        if record is None:
            return None
        expires = int(record.expires_at.timestamp()) if record.expires_at is not None else None
        return AccessToken(token=token, client_id=record.id, subject=record.id, scopes=[], expires_at=expires)


class TokenEpisodes:
    """The episode source of the HTTP mode: the open episode of the request's verified bearer token."""

    def __init__(self, tokens: TokenStore, pool: EpisodePool) -> None:
        self.tokens, self.pool = tokens, pool

    @asynccontextmanager
    async def lease(self) -> AsyncIterator[Served]:
        access = get_access_token()
        record: TokenRecord | None = self.tokens.lookup(access.token) if access is not None else None
        if record is None:  # checked again here: revoked or expired since the request was authenticated
            raise MCPError(types.INVALID_REQUEST, "no episode for this request: the token is unknown, revoked or expired")
        async with AsyncExitStack() as stack:
            try:
                session = await stack.enter_async_context(self.pool.lease(record))
            except PoolBusy as err:
                raise MCPError(types.INTERNAL_ERROR, f"server busy: {err}") from None
            except ClinseekError as err:
                logger.error("token %s: the episode %s cannot be opened: %s", record.id, record.spec.describe(), err)
                raise MCPError(types.INTERNAL_ERROR, f"the episode of token {record.id} cannot be opened; "
                                                     "the server's log says why") from None
            yield Served(session, record.spec.tool_names, record.spec.pictures)


def http_app(tokens: Path | TokenStore, settings: HttpSettings | None = None) -> Starlette:
    """The ASGI app of the HTTP mode (serve it with uvicorn, as ``clinseek mcp http`` does).

    Args:
        tokens: the token file (``clinseek mcp token`` writes it), or a store over it.
        settings: episode bounds, rate limit, endpoint path and host.

    Returns:
        A Starlette app; ``app.state.pool`` is its :class:`EpisodePool`.

    Raises:
        ClinseekError: the token file is not a token file; settings out of range.
    """
    settings = settings or HttpSettings()
    store = tokens if isinstance(tokens, TokenStore) else TokenStore(tokens)
    pool = EpisodePool(lambda record: open_spec(record.spec), max_open=settings.max_open,
                       idle_close_s=settings.idle_close_s)
    server = episode_server(TokenEpisodes(store, pool))
    security = None
    if settings.host in _LOCAL_HOSTS:
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])
    manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True, security_settings=security)
    endpoint = RequireAuthMiddleware(_RateLimited(StreamableHTTPASGIApp(manager), RateLimiter(
        settings.rate_per_s, settings.burst)), required_scopes=[])

    async def reap() -> None:
        every = min(30.0, settings.idle_close_s / 4)
        while True:
            await anyio.sleep(every)
            await pool.close_idle(store.valid_ids())

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            async with manager.run(), anyio.create_task_group() as tg:
                tg.start_soon(reap)
                yield
                tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await pool.aclose()

    app = Starlette(routes=[Route(settings.path, endpoint=endpoint)], lifespan=lifespan, middleware=[
        Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(_Verifier(store))),
        Middleware(AuthContextMiddleware)])
    app.state.pool = pool
    return app


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` (port 0: any free one), for :func:`serve_http` to listen on.

    Raises:
        ClinseekError: the host is unknown or the address cannot be bound (in use, not this machine's,
            a privileged port), in one line.
    """
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        # IPv4 first: "localhost" on a machine that lists ::1 first is still reached at 127.0.0.1
        family, kind, proto, _, address = min(found, key=lambda info: info[0] != socket.AF_INET)
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
        except OSError:
            sock.close()
            raise
    except OSError as err:  # socket.gaierror too
        raise ClinseekError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    return sock


async def serve_http(tokens: Path, settings: HttpSettings, port: int, *, log_level: str = "info",
                     **uvicorn_options: Any) -> None:
    """Serve :func:`http_app` on ``settings.host``:``port`` until cancelled (uvicorn).

    Raises:
        ClinseekError: the token file is not a token file, the address cannot be listened on, or the
            server did not start (before a request is served).
    """
    import uvicorn

    app = http_app(tokens, settings)
    sock = listen(settings.host, port)
    config = uvicorn.Config(app, host=settings.host, port=port, log_level=log_level, **uvicorn_options)
    try:
        with sock:
            await uvicorn.Server(config).serve(sockets=[sock])
    except SystemExit as done:  # uvicorn exits the process when its startup fails (exit code 3: "infra errors" here)
        if done.code in (0, None):
            raise
        raise ClinseekError(f"the HTTP server on {settings.host}:{port} did not start (its log above says why)") from None
