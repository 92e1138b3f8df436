"""Sticky routing over replicas of one model: every turn of a question goes to the same endpoint.

``--base-url`` repeated names replicas (vLLM / SGLang servers) of one model. A question is routed to
one of them by a hash of its qid, stable across processes and machines, so each of its turns (and
its other runs) reaches the replica whose prefix cache already holds its prompt, and the questions
of a benchmark spread evenly. The job being run is named by a context variable that the executor
sets around each job (:func:`routed`); the model calls inside it read it.

Within one endpoint every provider's calls share one client: ``openai:`` posts on one aiohttp session,
``anthropic:`` / ``bedrock:`` / ``vertex:`` use the SDK's aiohttp transport; neither connection pool
checks its other connections per request, so one client serves any number of calls in flight (before
session 8 the httpx-based SDKs were spread over one client per 32 calls in flight; docs/ray.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

from ..models import (
    ChatModel,
    GenerateConfig,
    Message,
    ModelResponse,
    TokenCounter,
    accepts_images,
    preflight,
)
from ._engine import Job

R = TypeVar("R")

_ROUTE: ContextVar[str | None] = ContextVar("clinseek_route", default=None)
"""The routing key (qid) of the job whose model calls run in this context; ``None`` outside a job."""


def replica_index(key: str, replicas: int) -> int:
    """The replica ``key`` goes to among ``replicas`` (SHA-256 based: the same in every process)."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % replicas


def routed(execute: Callable[[Job], Awaitable[R]]) -> Callable[[Job], Awaitable[R]]:
    """``execute`` with the job's qid set as the routing key while it runs."""

    async def call(job: Job) -> R:
        token = _ROUTE.set(job.qid)
        try:
            return await execute(job)
        finally:
            _ROUTE.reset(token)

    return call


class _OneModel:
    """A ``ChatModel`` over several instances of one model: the first one's name and capabilities, all closed together."""

    def __init__(self, members: Sequence[ChatModel], kind: str) -> None:
        if not members:
            raise ValueError(f"{type(self).__name__} needs at least one {kind}")
        self.members = list(members)
        self.inner = self.members[0]
        self.name = self.inner.name
        self.supports_native_tools = self.inner.supports_native_tools
        self.supports_vision = accepts_images(self.inner)

    async def aclose(self) -> None:
        """Close every instance."""
        for member in self.members:
            await member.aclose()


class EndpointRouter(_OneModel):
    """A ``ChatModel`` over replicas of one model; each call goes to its job's replica.

    Args:
        replicas: the same model reached at each endpoint, in the order given.

    Calls outside a job (no routing key) go to the first replica. Retries of a call (the runner's
    ``ResilientModel`` wraps the router) go to the same replica.
    """

    def __init__(self, replicas: Sequence[ChatModel]) -> None:
        super().__init__(replicas, "replica")
        self.replicas = self.members

    def pick(self) -> ChatModel:
        """The replica of the job running in this context."""
        key = _ROUTE.get()
        return self.replicas[0] if key is None else self.replicas[replica_index(key, len(self.replicas))]

    async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                       config: GenerateConfig | None = None) -> ModelResponse:
        """Call this job's replica."""
        return await self.pick().generate(messages, tools, config)

    async def preflight(self, *, tools: bool, timeout_s: float) -> tuple[Any, TokenCounter]:
        """Check every replica (each must serve the run); the first one's report and token counter.

        Raises:
            ModelError: a replica cannot serve the run (its error names its endpoint).
        """
        first: tuple[Any, TokenCounter] | None = None
        for replica in self.replicas:
            checked = await preflight(replica, tools=tools, timeout_s=timeout_s)
            first = first or checked
        assert first is not None
        return first
