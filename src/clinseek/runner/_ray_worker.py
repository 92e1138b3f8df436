"""What runs inside Ray: the episode workers and the cluster-wide provider limiter.

Plain classes, made Ray actors by the driver (:mod:`._ray`) with ``ray.remote(...)``, so that
importing them never imports Ray. An :class:`EpisodeWorker` is an async actor: many question runs
of it share one event loop (the agent loop waits on the model), each with its own sealed episode,
built in a worker thread from the worker's own store (a path or a staged copy; the store itself is
never shipped as a connection). Jobs go in and rows come out in batches (one actor call carries
many), and the one :class:`LimiterActor` of the run keeps the provider's request rate and spreads
its 429 pauses across the cluster.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import socket
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..models import ChatModel, GenerateConfig, Message, ModelResponse, TokenCounter
from ..records import ResultRow
from ._engine import Job
from ._retry import ProviderLimiter, ResilientModel
from ._routing import routed
from ._stage import StagedStore, check_worker_store, materialize

if TYPE_CHECKING:
    from ..agent import AgentOutcome
    from ..knowledge import Knowledge
    from ._execute import Executor
    from ._settings import RunSettings


class LimiterActor:
    """One provider's request rate and 429 pauses for every worker of a run (a Ray actor).

    With a request rate (``--requests-per-s``) every model call of every worker takes a lease here
    (:meth:`acquire` / :meth:`release`): the rate is kept over the whole cluster. Without one, no
    call comes here at all: the driver's job window already caps the calls in flight over the
    cluster (a job has at most one model call in flight), and each worker keeps its share locally.
    Either way a 429 seen by any worker reaches every worker: :meth:`pause` holds this limiter's
    grants and is broadcast to every registered worker (:meth:`register`), one actor call each.
    A lease is named by its caller (``owner``: a worker); :meth:`release_owner` frees the leases of
    a worker that died holding them. Counts what it granted, for tests and progress.
    """

    def __init__(self, max_concurrent: int, requests_per_s: float | None) -> None:
        self._limiter = ProviderLimiter(max_concurrent=max_concurrent, requests_per_s=requests_per_s)
        self._leases: dict[str, set[str]] = {}
        self._gone: set[str] = set()
        """Owners released as dead, and leases given back before they were granted."""
        self._workers: dict[str, Any] = {}
        """Worker name -> actor handle, the receivers of a pause."""
        self.granted = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.pauses = 0

    def register(self, owner: str, handle: Any) -> None:
        """Send ``owner`` (a worker's actor ``handle``) every pause from now on."""
        if owner not in self._gone:
            self._workers[owner] = handle

    async def acquire(self, owner: str, lease: str) -> None:
        """Wait for a slot and the rate's turn; the slot is ``lease``'s until :meth:`release`."""
        await self._limiter.acquire_for(lease)
        if owner in self._gone or lease in self._gone:  # the caller died or gave up meanwhile
            self._gone.discard(lease)
            self._limiter.release_for(lease)
            return
        self._leases.setdefault(owner, set()).add(lease)
        self.granted += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def release(self, owner: str, lease: str) -> None:
        """Give ``lease`` back (one not granted yet is given back as soon as it is)."""
        held = self._leases.get(owner)
        if held is None or lease not in held:
            self._gone.add(lease)
            return
        held.discard(lease)
        self.in_flight -= 1
        self._limiter.release_for(lease)

    def pause(self, seconds: float, origin: str | None = None) -> None:
        """Hold every new call of the provider for ``seconds`` (a 429 seen by worker ``origin``): here,
        and on every other registered worker."""
        self.pauses += 1
        self._limiter.pause(seconds)
        for owner, handle in self._workers.items():
            if owner != origin:
                handle.pause.remote(seconds)  # fire and forget: a dead worker has no calls to pause

    def release_owner(self, owner: str) -> int:
        """Free every lease of ``owner`` (a dead worker) and stop sending it pauses; the number freed."""
        self._gone.add(owner)
        self._workers.pop(owner, None)
        held = self._leases.pop(owner, set())
        for lease in held:
            self.in_flight -= 1
            self._limiter.release_for(lease)
        return len(held)

    def stats(self) -> dict[str, int]:
        """``granted`` leases (rate-limited runs), ``in_flight`` now, ``max_in_flight`` seen, ``pauses`` received."""
        return {"granted": self.granted, "in_flight": self.in_flight, "max_in_flight": self.max_in_flight,
                "pauses": self.pauses}


class ClusterLimiter(ProviderLimiter):
    """A worker's view of the run's :class:`LimiterActor`.

    With a request rate, each model call holds one of the actor's leases (two actor calls per
    model call: the rate is the cluster's). Without one, calls take this worker's local slots
    (``max_concurrent``: its share of the run's concurrency) and never leave the process. A 429
    (:meth:`pause`) pauses this worker at once and every other one through the actor.
    """

    def __init__(self, actor: Any, owner: str, *, max_concurrent: int, rate: bool) -> None:
        super().__init__(max_concurrent=max_concurrent)
        self._actor = actor
        self._owner = owner
        self._rate = rate
        self._ids = itertools.count()

    async def call(self, model: ChatModel, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]],
                   config: GenerateConfig | None) -> ModelResponse:
        """Run one call inside the cluster-wide limits."""
        if not self._rate:
            return await super().call(model, messages, tools, config)
        lease = f"{self._owner}/{next(self._ids)}"
        try:
            await self._actor.acquire.remote(self._owner, lease)  # the actor also holds a pause
            return await model.generate(messages, tools, config)
        finally:  # also when cancelled while waiting: the limiter gives the slot back once granted
            self._actor.release.remote(self._owner, lease)

    def pause(self, seconds: float) -> None:
        """Pause the provider here and on every other worker of the run."""
        self.pause_here(seconds)
        self._actor.pause.remote(seconds, self._owner)

    def pause_here(self, seconds: float) -> None:
        """Pause this worker's calls only (another worker's 429, broadcast by the actor)."""
        super().pause(seconds)


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """What every worker of a run is built from (pickled to each)."""

    model: str | ChatModel
    """``provider:model`` (built in the worker, with ``settings.model``), or a picklable ``ChatModel``."""
    settings: RunSettings
    """The run's settings; its knowledge source is a config (each worker opens its own)."""
    store: str
    """The store as the worker reads it: a path (on a filesystem every node mounts)."""
    store_id: str | None
    """The identity the worker's store must have (``None``: the run reads no store)."""
    limiter: Any
    """The run's :class:`LimiterActor` (an actor handle)."""
    staged: StagedStore | None = None
    """The store shipped by the driver (``--stage-store``), written to each node once."""


@dataclass(frozen=True, slots=True)
class GroupSpec:
    """One (benchmark, mode) of the run: what the driver's :class:`Executor` was built with."""

    mode: Literal["agent", "curated"]
    benchmark: str
    digest: str
    tools: tuple[str, ...]
    image_dir: str | None
    vision: bool
    counter: TokenCounter
    notes: Mapping[str, Sequence[str]] = field(default_factory=dict)


class EpisodeWorker:
    """A Ray async actor that runs question runs of a benchmark, many at once.

    :meth:`ready` builds the model (its calls limited cluster-wide) and checks (or stages) the store;
    :meth:`configure` prepares one (benchmark, mode); :meth:`submit` starts jobs (many per actor
    call), and :meth:`collect` hands back the rows of the jobs done since the last collect (many per
    reply; failures inside are ``infra_error`` rows, as in the local executor). Rows are never
    written here: the driver writes them. Each job carries the driver's ticket, so a row that comes
    back is matched to exactly one job. At most ``slots`` jobs run at once (its share of the run's
    concurrency); the others submitted wait here, in order, and start as soon as a running one ends.
    """

    def __init__(self, spec: WorkerSpec, name: str, slots: int = 1) -> None:
        self.spec = spec
        self.name = name
        self.slots = slots
        self._queue: deque[tuple[str, Executor, int, Job]] = deque()
        """Jobs submitted and not started yet, in order (every group's)."""
        self._runners = 0
        """Runner tasks alive (at most ``slots``): each runs queued jobs one after another."""
        self.node = os.environ.get("RAY_NODE_NAME") or socket.gethostname()
        self._store = Path(spec.store)
        self._model: ChatModel | None = None
        self._base: ChatModel | None = None
        self._knowledge: Knowledge | None = None
        self._owned_knowledge = False
        self._executors: dict[str, Executor] = {}
        self._limiter: ClusterLimiter | None = None
        self._running: set[asyncio.Task[None]] = set()
        self._tails: list[tuple[str, Executor, int, Job, tuple[AgentOutcome, float, str] | Exception]] = []
        """Jobs finished whose rows are not built yet (:meth:`_finished`)."""
        self._rows_due = False
        self._done: dict[str, list[tuple[int, ResultRow]]] = {}
        self._has_done: dict[str, asyncio.Event] = {}

    async def ready(self) -> dict[str, Any]:
        """Build the model, reach the store; ``{"name", "node", "host", "pid", "store", "gpus"}`` (the GPU ids
        Ray gave this worker: it sets ``CUDA_VISIBLE_DEVICES`` to them).

        Raises:
            ClinseekError: the store is missing or another store on this node, a model that cannot be
                built here (a missing key in this node's environment...).
        """
        import ray

        from ._run import _model

        spec = self.spec
        if spec.staged is not None:
            self._store = await materialize(spec.staged, _fetch)
        check_worker_store(self._store, spec.store_id, self.node)
        settings = spec.settings
        self._base = _model(spec.model, settings) if isinstance(spec.model, str) else spec.model
        self._limiter = ClusterLimiter(spec.limiter, self.name, max_concurrent=self.slots,
                                       rate=settings.model.requests_per_s is not None)
        model: ChatModel = ResilientModel(self._base, self._limiter, settings.model.retry)
        if settings.model.cache_dir is not None:
            from ._cache import CachedModel, ResponseCache

            model = CachedModel(model, ResponseCache(settings.model.cache_dir))
        self._model = model
        context = ray.get_runtime_context()
        await spec.limiter.register.remote(self.name, context.current_actor)
        return {"name": self.name, "node": context.get_node_id(), "host": self.node, "pid": os.getpid(),
                "store": str(self._store), "gpus": [str(g) for g in ray.get_gpu_ids()]}

    async def configure(self, key: str, group: GroupSpec) -> None:
        """Prepare the executor of one (benchmark, mode), named ``key`` in :meth:`execute` calls."""
        from ..tools import BROWSER_TOOLS
        from ._execute import Executor
        from ._knowledge import open_run_knowledge

        assert self._model is not None, "ready() first"
        settings = self.spec.settings
        source = settings.sources.knowledge
        if self._knowledge is None and source is not None and any(t in BROWSER_TOOLS for t in group.tools):
            self._knowledge, self._owned_knowledge = await open_run_knowledge(source)
        # no databases prepared ahead (Executor.episodes_at_once): a group's job count is not known here, and its
        # slots could be 64 databases (~275 MiB, ~2 s of CPU) for a group of 2 jobs
        self._executors[key] = Executor(
            store=self._store, mode=group.mode, model=self._model, benchmark=group.benchmark, digest=group.digest,
            settings=settings, tools=group.tools, image_dir=Path(group.image_dir) if group.image_dir else None,
            knowledge=self._knowledge, vision=group.vision, store_id=self.spec.store_id, counter=group.counter,
            notes=group.notes)

    async def submit(self, key: str, jobs: Sequence[tuple[int, Job]]) -> None:
        """Queue ``jobs`` (driver's ticket, job) of group ``key``; their rows come back through :meth:`collect`."""
        executor = self._executors[key]
        self._queue.extend((key, executor, ticket, job) for ticket, job in jobs)
        while self._runners < min(self.slots, len(self._queue)):
            self._runners += 1
            task = asyncio.create_task(self._run_queued())
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _run_queued(self) -> None:
        """Run queued jobs one after another until none is left.

        A job's successor starts in the same step of the event loop as the job's outcome comes back, as
        the local engine's workers do: its request leaves at once instead of after every other reply of
        the wave that a semaphore's wake-up would queue it behind (docs/ray.md, "Session 10"). The
        finished job's row is built later (:meth:`_finished`), after the requests of that step have left.
        """
        try:
            while self._queue:
                key, executor, ticket, job = self._queue.popleft()
                try:
                    done: tuple[AgentOutcome, float, str] | Exception = await routed(executor.run)(job)
                except Exception as exc:  # recorded, as the local engine does
                    done = exc
                self._finished(key, executor, ticket, job, done)
        finally:
            self._runners -= 1

    def _finished(self, key: str, executor: Executor, ticket: int, job: Job,
                  done: tuple[AgentOutcome, float, str] | Exception) -> None:
        """Keep a finished job until the rows of its step are built (:meth:`_build_rows`).

        Replies that arrive together are handled in one step of the event loop, and each of their
        successors' requests leaves in the next step (aiohttp writes a request body from a task of its
        own). Building the rows in that step would hold every request of the wave behind every row of
        it; they are built one step later still, after those requests have left (docs/ray.md,
        "Session 11").
        """
        self._tails.append((key, executor, ticket, job, done))
        if not self._rows_due:
            self._rows_due = True
            loop = asyncio.get_running_loop()
            loop.call_soon(loop.call_soon, self._build_rows)  # two steps: behind the sends the next step makes

    def _build_rows(self) -> None:
        """The rows of every job finished since the last call, ready for :meth:`collect`."""
        self._rows_due = False
        tails, self._tails = self._tails, []
        for key, executor, ticket, job, done in tails:
            try:
                row = executor.error_row(job, done) if isinstance(done, Exception) else executor.row(job, *done)
            except Exception as exc:  # a row that cannot be built is recorded as the local engine records it
                row = executor.error_row(job, exc)
            self._done.setdefault(key, []).append((ticket, row))
            self._has_done.setdefault(key, asyncio.Event()).set()

    async def collect(self, key: str) -> list[tuple[int, ResultRow]]:
        """The (ticket, row) of every job of group ``key`` done since the last call, waiting for at least one."""
        event = self._has_done.setdefault(key, asyncio.Event())
        while not self._done.get(key):
            event.clear()
            await event.wait()
        return self._done.pop(key)

    def pause(self, seconds: float) -> None:
        """Hold this worker's new model calls for ``seconds`` (a 429 another worker saw)."""
        if self._limiter is not None:
            self._limiter.pause_here(seconds)

    async def close(self) -> None:
        """Close the model clients and the knowledge source this worker opened."""
        self._queue.clear()  # jobs still out when the run stopped: never written
        for task in list(self._running):
            task.cancel()
        for executor in self._executors.values():
            closer = getattr(executor, "close", None)  # executors that own a store reader close it
            if closer is not None:
                closer()
        self._executors.clear()
        if self._knowledge is not None and self._owned_knowledge:
            from ._knowledge import close_knowledge

            close_knowledge(self._knowledge)
        if self._base is not None and isinstance(self.spec.model, str):
            await self._base.aclose()


async def _fetch(ref: Any) -> bytes:
    """One staged chunk, from this node's object store (pulled there from the driver's)."""
    data: bytes = await ref
    return data


def worker_settings(settings: RunSettings) -> RunSettings:
    """The settings a worker gets: no progress display (the driver shows it)."""
    return replace(settings, run=replace(settings.run, progress=False))
