"""The HTTP exchange of the OpenAI-compatible provider: one ``POST {base_url}/chat/completions`` on aiohttp.

The provider calls the endpoint with ``aiohttp`` directly rather than through the ``openai`` SDK: the
SDK's request pipeline (options, headers, retry bookkeeping, its httpx-over-aiohttp adapter) cost
2.4–3.1 ms of CPU per call at 256 calls in flight against 0.6 ms for the same exchange on a bare
``aiohttp.ClientSession`` (docs/ray.md, "Performance"), and a run at concurrency 256 on two cores spends
its time there. What the SDK did that the runner relies on is kept:

- **base URL**: ``base_url``, else ``OPENAI_BASE_URL``, else ``https://api.openai.com/v1``; the path is
  appended after one ``/``;
- **headers**: ``Authorization: Bearer <key>``, JSON content type, ``OpenAI-Organization`` /
  ``OpenAI-Project`` from ``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID``;
- **proxies**: ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``NO_PROXY`` of the environment, read once per endpoint;
- **errors** in the retry taxonomy: an HTTP error status through :func:`from_status` (``Retry-After``
  read, the provider's ``error.message`` in the text as ``Error code: <status> - <message>``), a refused
  or dropped connection and a body that is not JSON as ``ProviderUnavailable``;
- **no retries**: one request per call (the runner's ``ResilientModel`` retries with backoff).

What a misbehaving server sends is bounded and named: a body over :data:`MAX_REPLY_BYTES` is refused
(never buffered whole), a reply that is not JSON is quoted with its content type and the endpoint's URL
(an event stream says so), an error page keeps its words, and a byte that is not UTF-8 (or a declared
``charset``) is read as U+FFFD rather than losing the reply.

The timeout is the caller's (``asyncio.timeout`` around the call).
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from .._version import __version__
from ._decode import scrub_surrogates, shown_url, snippet
from ._errors import ModelCallError, ProviderUnavailable
from ._loops import PerLoop
from ._sdk_errors import from_status

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")

MAX_REPLY_BYTES = 32 << 20
"""Largest reply body read (32 MiB): a chat completion is at most a few hundred KB; a server that keeps
sending (a proxy gone wrong) is cut off here rather than filling memory until the call's timeout."""

OPENAI_API_BASE = "https://api.openai.com/v1"
"""OpenAI's own API, used when neither ``base_url`` nor ``OPENAI_BASE_URL`` is given."""


class ChatEndpoint:
    """An OpenAI-compatible endpoint: its base URL, headers and one aiohttp session per event loop.

    Args:
        api_key: sent as ``Authorization: Bearer``; never in a record, message or ``repr``.
        base_url: e.g. ``http://127.0.0.1:8000/v1``; ``None`` for ``OPENAI_BASE_URL`` or OpenAI's API.
        model: ``provider:model``, named in the errors.

    One session (its connection pool, any number of connections) per event loop, opened on the loop's
    first call and closed with the loop or by :meth:`aclose` (:class:`~._loops.PerLoop`).
    """

    def __init__(self, *, api_key: str, base_url: str | None, model: str) -> None:
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_API_BASE).rstrip("/")
        self.api_key = api_key
        self._model = model
        headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json",
                   "Accept": "application/json", "User-Agent": f"clinseek/{__version__}"}
        for header, variable in (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID")):
            if os.environ.get(variable):
                headers[header] = os.environ[variable]
        self._headers = headers
        self._proxy = _env_proxy(self.base_url)
        self._sessions = PerLoop(self._new_session, aiohttp.ClientSession.close)

    def __repr__(self) -> str:
        return f"ChatEndpoint({self.base_url!r})"

    def _new_session(self) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), headers=self._headers,
                                     timeout=aiohttp.ClientTimeout(total=None), raise_for_status=False)

    async def post(self, path: str, body: dict[str, Any] | str) -> tuple[Any, str | None]:
        """``POST {base_url}/{path}`` with ``body`` as JSON (a dict, or its JSON text already encoded):
        (the reply's JSON, its ``x-request-id``).

        Raises:
            ModelCallError: an HTTP error status (``RateLimited``, ``BadRequest``, ...), a failed
                connection or a reply that is not JSON (``ProviderUnavailable``).
        """
        data = (body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)).encode()
        url = f"{self.base_url}/{path}"
        try:
            async with (await self._sessions.get()).post(url, data=data, proxy=self._proxy) as reply:
                raw = await _read_capped(reply)
                status, headers, charset = reply.status, reply.headers, reply.charset
        except aiohttp.ClientConnectionError as err:
            raise ProviderUnavailable(f"connection failed: {err}", model=self._model, no_reply=True) from None
        except aiohttp.ClientError as err:
            raise ProviderUnavailable(f"unreadable reply from {shown_url(url)}: {type(err).__name__}: {err}",
                                      model=self._model) from None
        if raw is None:
            raise ProviderUnavailable(f"the reply from {shown_url(url)} is larger than {MAX_REPLY_BYTES >> 20} MiB; "
                                      "not read", model=self._model)
        request_id = headers.get("x-request-id")
        if status >= 400:
            raise _status_error(status, raw, headers, self._model)
        try:
            reply_json = _json(raw, charset)
        except (ValueError, RecursionError) as err:  # RecursionError: nested too deep
            raise ProviderUnavailable(_unreadable(url, raw, headers, err), model=self._model) from None
        if _SURROGATE_ESCAPE.search(raw):  # a \udXXX escape: a lone one would break every later encode
            try:
                reply_json = scrub_surrogates(reply_json)
            except RecursionError:  # JSON that json could read but too deep to walk
                raise ProviderUnavailable("unreadable reply: nested too deeply", model=self._model) from None
        return reply_json, request_id

    async def aclose(self) -> None:
        """Close every session still open (their connections)."""
        await self._sessions.aclose()


async def _read_capped(reply: aiohttp.ClientResponse) -> bytes | None:
    """The reply's body, or ``None`` when it is longer than :data:`MAX_REPLY_BYTES` (not read further)."""
    if reply.content_length is not None and reply.content_length > MAX_REPLY_BYTES:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in reply.content.iter_any():
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            return None
        chunks.append(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _json(raw: bytes, charset: str | None) -> Any:
    """The reply's JSON: UTF-8 (or the ``charset`` the server declared); a byte that does not decode is read
    as U+FFFD (a model's text cut inside a character must not lose the whole reply, again on every retry)."""
    if charset and charset.lower().replace("_", "-") not in ("utf-8", "utf8"):
        try:
            return json.loads(raw.decode(charset, errors="replace"))
        except LookupError:  # a charset Python does not know: read as UTF-8
            pass
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        return json.loads(raw.decode("utf-8", errors="replace"))


def _unreadable(url: str, raw: bytes, headers: Any, err: Exception) -> str:
    """Why a 200 reply could not be read: the endpoint, what it sent (content type, size, its start)."""
    kind = headers.get("Content-Type", "no content type")
    if "text/event-stream" in kind or raw.lstrip().startswith((b"data:", b"event:")):
        return (f"{shown_url(url)} streamed its reply (text/event-stream) though the request asked for one JSON "
                "reply (stream: false); use a server or proxy that honours stream: false")
    said = snippet(raw)
    return (f"unreadable reply from {shown_url(url)} ({kind}, {len(raw):,} bytes): {type(err).__name__}: {err}"
            + (f"; it reads: {said!r}" if said else ""))


def _status_error(status: int, raw: bytes, headers: Any, model: str) -> ModelCallError:
    """The taxonomy error of an HTTP error reply, worded as the SDK worded it."""
    text = raw.decode("utf-8", errors="replace").strip()
    message = f"Error code: {status}"
    body: Any = text
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        said = snippet(raw)  # a proxy's HTML page ("502 Bad Gateway ... nginx"): its words
        if said:
            message += f" - {said}"
    else:
        error = body.get("error", body) if isinstance(body, dict) else None
        # {"error": {"message": ...}} (OpenAI, vLLM, llama.cpp), {"message": ...} (older vLLM),
        # {"error": "<text>"} (TGI, Ollama), {"detail": "<text>"} (FastAPI's own 404 / 405: vLLM, SGLang)
        detail = (error.get("message") or error.get("detail")) if isinstance(error, dict) else error
        detail = _validation_errors(detail) if isinstance(detail, list) else detail
        if isinstance(detail, str) and detail:
            message += f" - {detail}"
    data = body.get("error", body) if isinstance(body, dict) else body
    return from_status(status, message, data, headers, model)


def _validation_errors(items: list[Any]) -> str:
    """FastAPI's own 422 ``detail`` (llama-cpp-python, FastChat, LiteLLM's proxy): ``[{"loc": ["body",
    "messages", 2, "content"], "msg": "none is not an allowed value", ...}]`` as ``body.messages.2.content:
    none is not an allowed value``; the first three, then how many more."""
    said = []
    for item in items[:3]:
        if isinstance(item, dict) and isinstance(item.get("msg"), str):
            loc = item.get("loc")
            where = ".".join(str(part) for part in loc) if isinstance(loc, list) else ""
            said.append(f"{where}: {item['msg']}" if where else item["msg"])
    more = f" (and {len(items) - 3} more)" if len(items) > 3 and said else ""
    return "; ".join(said) + more


def _env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY`` ...), ``None`` when none or ``NO_PROXY`` covers it."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return proxy


__all__ = ["OPENAI_API_BASE", "ChatEndpoint"]
