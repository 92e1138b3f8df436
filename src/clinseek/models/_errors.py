"""Errors of a model call, in the small taxonomy the runner retries on.

::

    ClinseekError
    └── ModelCallError            a model call failed (provider, model, status kept as attributes)
        ├── RateLimited           HTTP 429 / throttling; retry after ``retry_after_s``
        ├── ProviderUnavailable   HTTP 5xx / 408 / 529, connection error, timeout, unreadable reply; retry
        ├── ContextLengthExceeded the request does not fit the model's context window; do not retry as is
        ├── PromptRefused         the provider's content filter refused the prompt; never retried
        └── BadRequest            any other 4xx (bad parameters, auth, unknown model); never retried

The SDKs' own retries are turned off (``max_retries=0``): the runner owns retries and backoff.
Messages carry the provider's error text, never the request headers (so never an API key).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ClinseekError

if TYPE_CHECKING:
    from ._messages import CallAttempt


class ModelCallError(ClinseekError):
    """A call to a model provider failed.

    Attributes:
        provider: the provider name (``"openai"``, ``"anthropic"``, ``"bedrock"``, ``"vertex"``, ...).
        model: the full model name ``provider:model``.
        status_code: the HTTP status when there was one, else ``None``.
        retryable: whether the runner should retry the same request (class-level default).
        attempts: every attempt of the call when a retrying wrapper made them (the last one is
            this error); empty otherwise.
    """

    retryable: bool = False

    def __init__(self, message: str, *, model: str = "", status_code: int | None = None) -> None:
        self.attempts: list[CallAttempt] = []
        self.model = model
        self.provider = model.split(":", 1)[0] if model else ""
        self.status_code = status_code
        prefix = f"{model}: " if model else ""
        status = f"HTTP {status_code}: " if status_code is not None else ""
        super().__init__(f"{prefix}{status}{message}")


class RateLimited(ModelCallError):
    """The provider throttled the call (HTTP 429 or a throttling error).

    Attributes:
        retry_after_s: seconds the provider asked to wait (``retry-after`` / ``retry-after-ms``
            headers), or ``None`` when it did not say.
    """

    retryable = True

    def __init__(
        self,
        message: str,
        *,
        model: str = "",
        status_code: int | None = 429,
        retry_after_s: float | None = None,
    ) -> None:
        self.retry_after_s = retry_after_s
        super().__init__(message, model=model, status_code=status_code)


class ProviderUnavailable(ModelCallError):
    """The provider failed transiently: 5xx, 408, 529 (overloaded), connection error, timeout,
    or a reply that could not be read. Retried by the runner.

    Attributes:
        retry_after_s: seconds the server asked to wait (``Retry-After`` on a 503 / 529), or ``None``.
        no_reply: the server never answered: the connection failed (refused, reset, DNS) or no reply came
            within the request timeout. ``False`` for an HTTP status or a reply that could not be read: the
            server is there. The runner stops a run on a streak of these (docs/runner.md, "A server that goes away").
    """

    retryable = True

    def __init__(
        self, message: str, *, model: str = "", status_code: int | None = None, retry_after_s: float | None = None,
        no_reply: bool = False,
    ) -> None:
        self.retry_after_s = retry_after_s
        self.no_reply = no_reply
        super().__init__(message, model=model, status_code=status_code)


class ContextLengthExceeded(ModelCallError):
    """The request (prompt + requested output) does not fit the model's context window.

    The loop should compact older tool outputs or end the run; retrying the same request is useless.
    """


class PromptRefused(ModelCallError):
    """The provider refused the request for its content: a content filter on the prompt (Azure OpenAI's HTTP 400
    with ``error.code`` ``content_filter``, inner code ``ResponsibleAIPolicyViolation``), which clinical text can
    trip. Not retried, and not an infrastructure failure: the same prompt gets the same refusal, so the run ends
    without an answer (``stop_reason`` ``content_filter``, scored 0) instead of being redone on every resume.
    """


class BadRequest(ModelCallError):
    """Any other client error (4xx: invalid parameters, authentication, unknown model). Not retried."""


__all__ = ["BadRequest", "ContextLengthExceeded", "ModelCallError", "PromptRefused", "ProviderUnavailable", "RateLimited"]
