"""Retries with backoff and per-provider rate limits, as a ``ChatModel`` wrapper.

The providers turn their SDK retries off (``max_retries=0``) and raise the models' error
taxonomy; this wrapper owns retries. It retries only the error *types* marked retryable
(``RateLimited``, ``ProviderUnavailable``), never on message text, and honours ``retry_after_s``.
A 429 also makes every caller of the same provider wait (a shared cool-down).
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import anyio

from ..models import (
    CallAttempt,
    ChatModel,
    GenerateConfig,
    Message,
    ModelCallError,
    ModelResponse,
    ProviderUnavailable,
    RateLimited,
    accepts_images,
)

if TYPE_CHECKING:
    from ._outage import EndpointWatch


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How model calls are retried.

    Attributes:
        max_attempts: tries per call, the first included.
        base_delay_s: first backoff; it doubles per attempt (full jitter in [½, 1]×).
        max_delay_s: cap of one backoff (and of a provider's ``retry-after``).
        seed: seed of the jitter, for reproducible waits.
    """

    max_attempts: int = 6
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    seed: int = 0

    def delay_s(self, attempt: int, rng: random.Random, retry_after_s: float | None = None) -> float:
        """Seconds to wait before try ``attempt + 1`` (``attempt`` is 0-based)."""
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.max_delay_s)
        backoff = min(self.base_delay_s * float(2**attempt), self.max_delay_s)
        return float(backoff * (0.5 + 0.5 * rng.random()))

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form for the run manifest."""
        return asdict(self)


class ProviderLimiter:
    """Concurrency cap and optional request rate for one provider, shared by all its callers.

    Args:
        max_concurrent: model calls in flight at once.
        requests_per_s: steady request rate (``None`` = unlimited); requests are spaced evenly.
    """

    def __init__(self, max_concurrent: int = 64, requests_per_s: float | None = None) -> None:
        self._slots = anyio.CapacityLimiter(max_concurrent)
        self._interval = 1.0 / requests_per_s if requests_per_s else 0.0
        self._next_at = 0.0
        self._paused_until = 0.0
        self._lock = anyio.Lock()

    async def _wait_turn(self) -> None:
        if not self._interval:  # no rate to keep: only a 429 pause to honour, no lock or reservation needed
            delay = self._paused_until - time.monotonic()
            if delay > 0:
                await anyio.sleep(delay)
            return
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next_at, self._paused_until)
            self._next_at = start + self._interval
        if start > now:
            await anyio.sleep(start - now)

    async def acquire_for(self, borrower: object) -> None:
        """Take a slot on behalf of ``borrower`` and wait for its turn of the rate (for callers whose
        release comes from another task, such as the Ray executor's cluster-wide limiter)."""
        await self._slots.acquire_on_behalf_of(borrower)
        try:
            await self._wait_turn()
        except BaseException:
            self._slots.release_on_behalf_of(borrower)
            raise

    def release_for(self, borrower: object) -> None:
        """Give back ``borrower``'s slot (:meth:`acquire_for`)."""
        self._slots.release_on_behalf_of(borrower)

    def pause(self, seconds: float) -> None:
        """Hold every new call of this provider for ``seconds`` (after a 429)."""
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)

    async def call(self, model: ChatModel, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]],
                   config: GenerateConfig | None) -> ModelResponse:
        """Run one call inside the limits.

        A free slot is taken without a trip through the event loop (waiting callers keep their turn:
        ``acquire_nowait`` refuses while any wait), so a worker's next call reuses the HTTP connection
        its last call just released instead of queueing behind every other reply of the wave.
        """
        try:
            self._slots.acquire_nowait()
        except anyio.WouldBlock:
            await self._slots.acquire()
        try:
            await self._wait_turn()
            return await model.generate(messages, tools, config)
        finally:
            self._slots.release()


class ResilientModel:
    """A ``ChatModel`` that retries retryable errors with backoff under a provider limiter.

    Non-retryable errors (``BadRequest``, ``ContextLengthExceeded``) and the last retryable one
    propagate; the loop then ends the run (``context_length`` or ``infra_error``). ``watch`` (the run's
    :class:`~._outage.EndpointWatch`) is told how each call ended, once its retries are done.
    """

    def __init__(self, model: ChatModel, limiter: ProviderLimiter, policy: RetryPolicy | None = None,
                 watch: EndpointWatch | None = None) -> None:
        self.inner = model
        self.name = model.name
        self.supports_native_tools = model.supports_native_tools
        self.supports_vision = accepts_images(model)
        self.limiter = limiter
        self.policy = policy or RetryPolicy()
        self._rng = random.Random(self.policy.seed)
        self.retries = 0
        self.watch = watch

    async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                       config: GenerateConfig | None = None) -> ModelResponse:
        """Call the wrapped model, retrying ``RateLimited`` and ``ProviderUnavailable``.

        Every attempt is recorded (``CallAttempt``: ok, latency, error, wait before the next): on the
        response's ``attempts``, or on the raised error's ``attempts`` when the call finally fails.
        """
        attempts: list[CallAttempt] = []
        for attempt in range(self.policy.max_attempts):
            started = time.perf_counter()
            try:
                response = await self.limiter.call(self.inner, messages, tools, config)
            except ModelCallError as err:
                record = CallAttempt(ok=False, latency_s=time.perf_counter() - started, error_type=type(err).__name__,
                                     status_code=err.status_code, error=str(err))
                if not err.retryable or attempt + 1 >= self.policy.max_attempts:
                    err.attempts = [*attempts, record]
                    if self.watch is not None:
                        self.watch.failed(err)
                    raise
                retry_after = err.retry_after_s if isinstance(err, (RateLimited, ProviderUnavailable)) else None
                delay = self.policy.delay_s(attempt, self._rng, retry_after)
                if isinstance(err, RateLimited):
                    self.limiter.pause(delay)
                self.retries += 1
                attempts.append(record.model_copy(update={"wait_s": delay}))
                await anyio.sleep(delay)
                continue
            done = CallAttempt(ok=True, latency_s=response.latency_s)
            if self.watch is not None:
                self.watch.succeeded()
            return response.model_copy(update={"attempts": [*attempts, done]})
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        """Close the wrapped model."""
        await self.inner.aclose()
