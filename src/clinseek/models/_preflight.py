"""Pre-flight: one cheap check of an endpoint before the first question is run.

An unreachable server, an unknown model or a server that refuses tool calls would otherwise
surface as one infrastructure-error row per question, after every retry. :func:`preflight` asks
first and turns each of these into one :class:`~clinseek.errors.ModelError` that says what to do:

1. ``GET <base_url>/models`` with a short timeout (``connect_timeout_s``, 4 s): no answer at all →
   "cannot reach"; the listed model ids (and the context length vLLM / llama.cpp report) are kept.
2. One chat request of a few tokens (with one small tool when the run offers native tools):
   a 404 or a "model" error → "model not served" (naming the listed ones); a 400 about tools →
   "refuses tool calls" (use ``--tool-protocol text`` or start the server's tool parser); a 401 /
   403 → "key refused".
3. The tokenizer endpoint (:func:`~clinseek.models.probe_token_counter`) the budgets count with.

The Claude services (``anthropic``, ``bedrock``, ``vertex``) have their own pre-flight with the same
contract (``clinseek.models._anthropic_preflight``). Models without a ``preflight`` method (the
offline baselines, plug-ins) are not checked.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import anyio
from pydantic import BaseModel, ConfigDict, Field

from ..errors import ModelError
from ._errors import BadRequest, ModelCallError, ProviderUnavailable
from ._messages import GenerateConfig, Message
from ._tokens import ESTIMATE, TokenCounter, probe_token_counter, server_root

if TYPE_CHECKING:
    from ._openai import OpenAIChatModel

CONNECT_TIMEOUT_S = 4.0
"""Seconds the first pre-flight request may take: an unreachable server fails within them."""

PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "clinseek.ping",
        "description": "Answer the connectivity check.",
        "parameters": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    },
}
"""The one small tool a probe offers when the run uses native tool calling."""
_TOOL_ERROR = re.compile(r"tool|function", re.IGNORECASE)
# an error about the model itself ("The model `x` does not exist", 'model "x" not found', "unknown
# model"), not one that merely mentions it ("'temperature' does not support 0.0 with this model")
_MODEL_ERROR = re.compile(
    r"model\b[^.]{0,120}?\b(?:not found|does not exist|doesn't exist|not exist|is unknown|not available|not served"
    r"|not loaded|no such)|\b(?:unknown|invalid|no such|unsupported) model\b|model_not_found",
    re.IGNORECASE)


class PreflightReport(BaseModel):
    """What the pre-flight found (recorded in the run manifest as ``preflight``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    endpoint: str
    """The base URL checked (without credentials), or the provider's default endpoint."""
    served_models: list[str] | None = None
    """Model ids ``GET /models`` listed; ``None`` when the server has no such list."""
    model_listed: bool | None = None
    """Whether the model is among them (``None``: no list). A server that serves one model under any
    name (llama-cpp-python) answers anyway; the probe decides."""
    server_context_window: int | None = None
    """The context length the server reports (vLLM ``max_model_len``, llama.cpp ``n_ctx``), if any."""
    tools_checked: bool = False
    """True when the probe offered a tool and the server accepted the request."""
    token_counter: str = ESTIMATE.name
    """What the budgets count tokens with (``server:…`` exact, or the estimate)."""
    probe_latency_s: float | None = None
    """Wall time of the probe request, seconds."""
    notes: list[str] = Field(default_factory=list)
    """Anything worth a look that did not stop the run."""


@runtime_checkable
class Preflightable(Protocol):
    """A model that can check its endpoint (see :func:`preflight`)."""

    async def preflight(self, *, tools: bool, timeout_s: float) -> tuple[PreflightReport, TokenCounter]:
        """Check the endpoint; raise ``ModelError`` with what to do when it cannot serve the run."""
        ...


def _unwrap(model: object) -> object | None:
    """The first model in a chain of wrappers (``inner``) that has a ``preflight`` method."""
    for _ in range(16):
        if isinstance(model, Preflightable):
            return model
        model = getattr(model, "inner", None)
        if model is None:
            return None
    return None


async def preflight(model: object, *, tools: bool, timeout_s: float = 180.0) -> tuple[PreflightReport | None, TokenCounter]:
    """Check ``model``'s endpoint once (see the module docstring).

    Args:
        model: a ``ChatModel`` (wrappers are looked through via ``inner``).
        tools: offer one small tool in the probe (native tool calling will be used).
        timeout_s: limit of the probe chat request (the run's request timeout).

    Returns:
        ``(report, token counter)``; ``(None, ESTIMATE)`` for models that cannot be checked.

    Raises:
        ModelError: unreachable endpoint, unknown model, tools refused, key refused, or any other
            error reply to the probe (the message says which and what to do).
    """
    target = _unwrap(model)
    if target is None:
        return None, ESTIMATE
    assert isinstance(target, Preflightable)
    return await target.preflight(tools=tools, timeout_s=timeout_s)


async def openai_preflight(model: OpenAIChatModel, base_url: str, api_key: str, *, tools: bool,
                           timeout_s: float, key_hint: str = "check --api-key-env") -> tuple[PreflightReport, TokenCounter]:
    """The pre-flight of an OpenAI-compatible endpoint (``base_url`` ends in ``/v1`` for local servers);
    ``key_hint`` is what to do when the key is refused (where the key came from, never the key)."""
    import anyio.to_thread

    base_url = base_url.rstrip("/")
    endpoint = safe_url(base_url)
    headers = {"Authorization": f"Bearer {api_key}"}
    served, context = await _models(base_url, model.model_id, headers, endpoint, key_hint)
    listed = None if served is None else model.model_id in served
    notes: list[str] = []
    if listed is False:
        notes.append(f"{model.model_id!r} is not among the models {endpoint} lists ({', '.join(served or [])}); "
                     "the server answered the probe anyway (it serves one model under any name)")
    probe_tools = [PROBE_TOOL] if tools else []
    started = time.perf_counter()
    try:
        # no sampling parameters: OpenAI's reasoning models refuse any temperature but their default
        await model.generate([Message.user("Reply with the word OK.")], probe_tools,
                             GenerateConfig(max_output_tokens=16, timeout_s=timeout_s))
    except ModelCallError as err:
        raise _explain(err, model.name, endpoint, served, tools, key_hint, timeout_s) from None
    latency = time.perf_counter() - started
    counter = await anyio.to_thread.run_sync(probe_token_counter, base_url, model.model_id, headers)
    return PreflightReport(
        endpoint=endpoint, served_models=served, model_listed=listed, server_context_window=context,
        tools_checked=tools, token_counter=counter.name, probe_latency_s=round(latency, 3), notes=notes,
    ), counter


async def _models(base_url: str, model_id: str, headers: dict[str, str],
                  endpoint: str, key_hint: str) -> tuple[list[str] | None, int | None]:
    """(served model ids, the model's context length) from ``GET /models``; ``ModelError`` when no
    answer comes within :data:`CONNECT_TIMEOUT_S`."""
    import httpx2

    try:  # httpx's timeout is per read: a body that trickles in is bounded by the whole exchange's deadline
        with anyio.fail_after(CONNECT_TIMEOUT_S):
            async with httpx2.AsyncClient(timeout=CONNECT_TIMEOUT_S) as client:
                response = await client.get(base_url.rstrip("/") + "/models", headers=headers)
    except TimeoutError:  # connected (or connecting) but no whole answer: not a closed port
        raise ModelError(
            f"the model endpoint {endpoint} did not answer GET /models within {CONNECT_TIMEOUT_S:g} s: a server that "
            "is still starting or loading the model, an overloaded one, or an address that is not an HTTP API; "
            f"wait until `curl {endpoint}/models` answers, then rerun"
        ) from None
    except (httpx2.HTTPError, OSError) as err:
        tls = ("; the server answers plain HTTP: use http:// in --base-url"
               if endpoint.startswith("https://") and "WRONG_VERSION_NUMBER" in str(err) else "")
        raise ModelError(
            f"cannot reach the model endpoint {endpoint} ({type(err).__name__}: {str(err) or 'no answer'} within "
            f"{CONNECT_TIMEOUT_S:g} s){tls or '; is the server running, and does --base-url end in /v1?'}"
        ) from None
    if response.status_code in (401, 403):
        raise ModelError(f"{endpoint} refused the API key (HTTP {response.status_code}); {key_hint}")
    if response.status_code != 200:
        return None, None
    try:
        data = response.json().get("data") or []
    except (ValueError, AttributeError):
        return None, None
    if not isinstance(data, list):  # {"data": 5}: not a listing
        return None, None
    ids = [str(m.get("id")) for m in data if isinstance(m, dict) and m.get("id")]
    entry: dict[str, Any] = next((m for m in data if isinstance(m, dict) and m.get("id") == model_id), {})
    context = entry.get("max_model_len")
    if not isinstance(context, int):
        context = await _llama_cpp_context(base_url, headers)
    return ids, context if isinstance(context, int) else None


async def _llama_cpp_context(base_url: str, headers: dict[str, str]) -> int | None:
    """llama.cpp ``llama-server``'s context size (``GET /props``), else ``None``."""
    import httpx2

    try:
        with anyio.fail_after(CONNECT_TIMEOUT_S):  # the whole exchange (httpx's timeout is per read)
            async with httpx2.AsyncClient(timeout=CONNECT_TIMEOUT_S) as client:
                response = await client.get(server_root(base_url) + "/props", headers=headers)
        value = response.json().get("default_generation_settings", {}).get("n_ctx")
    except (httpx2.HTTPError, OSError, ValueError, AttributeError, TimeoutError):
        return None
    return value if isinstance(value, int) and response.status_code == 200 else None


def safe_url(url: str) -> str:
    """``url`` without user-info, query or fragment (they can carry credentials)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _explain(err: ModelCallError, name: str, endpoint: str, served: list[str] | None, tools: bool,
             key_hint: str = "check --api-key-env", timeout_s: float = 180.0) -> ModelError:
    """The one error the user sees for a failed probe."""
    listed = f"; it lists: {', '.join(served)}" if served else ""
    text = str(err)
    if err.status_code in (401, 403):
        return ModelError(f"{endpoint} refused the API key for {name} ({text}); {key_hint}")
    if err.status_code == 404 and served is None:  # neither GET /models nor POST /chat/completions is there
        return ModelError(f"{endpoint} has no OpenAI-compatible API for {name} (GET /models and POST "
                          f"/chat/completions are not found: {text}); does --base-url end in /v1?")
    if err.status_code == 404 or (isinstance(err, BadRequest) and _MODEL_ERROR.search(text) and not
                                  (tools and _TOOL_ERROR.search(text))):
        fix = f"; pass one it lists, e.g. --model {name.split(':', 1)[0]}:{served[0]}" if served else ""
        return ModelError(f"{endpoint} does not serve the model of {name}{listed} ({text}){fix}")
    if tools and isinstance(err, BadRequest) and _TOOL_ERROR.search(text):
        return ModelError(
            f"{endpoint} refuses tool calls for {name} ({text}); start the server with its tool parser "
            "(vLLM: --enable-auto-tool-choice --tool-call-parser <parser>; llama.cpp: llama-server --jinja) "
            "or run with --tool-protocol text"
        )
    if err.status_code is not None and err.status_code >= 500:
        return ModelError(
            f"{endpoint} failed on the pre-flight request for {name} ({text}): the server's own error, not the "
            "request's; its log says why (a model still loading, out of memory, a crashed worker): rerun once the "
            "server answers again"
        )
    if err.status_code is None and isinstance(err, ProviderUnavailable):  # no reply in time, a cut or unreadable one
        return ModelError(
            f"{endpoint} gave no usable answer to the pre-flight chat request for {name} ({text}; the request may take "
            f"{timeout_s:g} s): a server still loading the model, an overloaded one, or one that is not OpenAI-compatible "
            "on /chat/completions; rerun when it answers, or raise --request-timeout for a slow model"
        )
    return ModelError(f"the pre-flight request to {endpoint} for {name} failed: {text}")


__all__ = ["CONNECT_TIMEOUT_S", "PROBE_TOOL", "PreflightReport", "Preflightable", "openai_preflight", "preflight", "safe_url"]
