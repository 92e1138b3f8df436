"""Mapping the openai / anthropic SDK exceptions (same Stainless shape) onto the retry taxonomy."""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ._errors import (
    BadRequest,
    ContextLengthExceeded,
    ModelCallError,
    PromptRefused,
    ProviderUnavailable,
    RateLimited,
)

# Provider wordings of "the prompt does not fit": OpenAI's code, llama.cpp's error type
# (``exceed_context_size_error``: "request (N tokens) exceeds the available context size"), vLLM's
# ("maximum context length", V1's "longer than the maximum model length"), SGLang / LM Studio
# ("context length"), llama-cpp-python ("context window"), TGI's 422 ("`inputs` tokens +
# `max_new_tokens` must be <= N"), Anthropic's ("prompt is too long").
_CONTEXT_CODES = {"context_length_exceeded", "string_above_max_length", "exceed_context_size_error"}
_CONTEXT_TEXT = re.compile(
    r"context[ _](?:length|size)|maximum context|context window|context limit|prompt is too long"
    r"|too many (input )?tokens|input is too long|maximum model length|`?inputs`? tokens \+ `?max_new_tokens`?",
    re.IGNORECASE,
)


def map_sdk_error(err: Exception, model: str, sdk: ModuleType) -> ModelCallError:
    """The taxonomy error for an exception raised by ``sdk`` (the ``openai`` or ``anthropic`` module)."""
    if isinstance(err, sdk.APITimeoutError):
        refused = _connection_failure(err)
        if refused is not None:
            return ProviderUnavailable(f"connection failed: {refused}", model=model, no_reply=True)
        return ProviderUnavailable("the request timed out", model=model, no_reply=True)
    if isinstance(err, sdk.APIConnectionError):
        return ProviderUnavailable(f"connection failed: {err}", model=model, no_reply=True)
    if isinstance(err, sdk.APIStatusError):
        return from_status(err.status_code, str(err.message), err.body, err.response.headers, model)
    return ProviderUnavailable(f"unreadable reply: {type(err).__name__}: {err}", model=model)


def _connection_failure(err: BaseException) -> OSError | None:
    """The failed connection behind an SDK timeout error, if that is what it was: the SDK's aiohttp
    transport reports a refused connection (any ``aiohttp.ClientConnectionError``) as a connect timeout.
    ``None`` when the chain of causes holds a real ``TimeoutError`` or no ``OSError``."""
    seen: set[int] = set()
    cause: BaseException | None = err.__cause__ or err.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, TimeoutError):
            return None
        if isinstance(cause, OSError):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def is_credential_error(err: BaseException) -> bool:
    """Whether ``err`` was raised while the SDK resolved credentials, before any request was sent:
    botocore (AWS credential chain, SigV4 signing), google.auth (application-default credentials),
    or the Anthropic SDK's own "Could not resolve …" (no AWS credentials, no Vertex token or project)."""
    module = type(err).__module__
    if module.startswith(("botocore.", "google.auth.")) or module in ("botocore", "google.auth"):
        return True
    return isinstance(err, (RuntimeError, ValueError)) and str(err).startswith("Could not resolve")


def from_status(
    status: int, message: str, body: Any, headers: Mapping[str, str], model: str
) -> ModelCallError:
    """The taxonomy error for an HTTP error status with the provider's message and JSON body."""
    if status == 429:
        return RateLimited(message, model=model, retry_after_s=retry_after_s(headers))
    if status in (400, 413, 422) and _is_context_length(message, body):
        return ContextLengthExceeded(message, model=model, status_code=status)
    if status == 400 and _is_content_filter(body):
        return PromptRefused(message, model=model, status_code=status)
    if status >= 500 or status in (408, 409):
        return ProviderUnavailable(message, model=model, status_code=status, retry_after_s=retry_after_s(headers))
    return BadRequest(message, model=model, status_code=status)


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date), else None."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if _looks_like_date(value) else None
        return None if parsed is None else max(parsed.timestamp() - time.time(), 0.0)


def _looks_like_date(value: str) -> bool:
    try:
        email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return False
    return True


_FILTER_CODES = {"content_filter", "ResponsibleAIPolicyViolation"}
"""Azure OpenAI's codes of a prompt its content filter refused (``error.code``, ``error.innererror.code``)."""


def _is_content_filter(body: Any) -> bool:
    error = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return False
    inner = error.get("innererror")
    return error.get("code") in _FILTER_CODES or (isinstance(inner, dict) and inner.get("code") in _FILTER_CODES)


def _is_context_length(message: str, body: Any) -> bool:
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict) and (error.get("code") in _CONTEXT_CODES or error.get("type") in _CONTEXT_CODES):
        return True
    return bool(_CONTEXT_TEXT.search(message))


__all__ = ["from_status", "is_credential_error", "map_sdk_error", "retry_after_s"]
