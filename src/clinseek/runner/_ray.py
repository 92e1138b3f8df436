"""The Ray executor: the jobs of a run on async Ray actors, the rows written by the driver alone.

``RunOptions.executor = "ray"`` (``clinseek run --executor ray``). The driver (the process that
called ``run_benchmark``) joins or starts a Ray cluster and starts ``workers`` async actors
(:class:`~._ray_worker.EpisodeWorker`), spread over the nodes, plus one
:class:`~._ray_worker.LimiterActor` (the cluster's request rate and 429 pauses). It hands out the
jobs in (run_index, question) order, each to the live worker with the fewest out, many per actor
call; a worker runs at most its share of ``concurrency`` (the shares sum to it) and holds as many
more queued (:func:`queued`), so that a finished job's successor starts at once, not after the driver's
round trip. The rows stream back as their jobs
finish (all those done since the last reply, in one reply per worker) and the driver appends each
to ``results.jsonl``, exactly as the local engine does (same resume, manifest and configuration
hash: the executor is not part of it).

A worker that dies (its node lost, the actor killed) loses its jobs' rows, never a written one:
each of its jobs goes back to the front of the queue and runs on another worker, and the dead
worker is replaced. A job that was running on two workers that died is written as an
``infra_error`` row (redone on resume) rather than tried a third time. docs/ray.md tells the rest.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import uuid
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from ..errors import ClinseekError, import_optional
from ..models import ChatModel
from ..records import ResultRow
from ..tools import IMAGE_TOOLS
from ._counts import RowCounts
from ._engine import Job, store_failure
from ._execute import Executor
from ._progress import Progress
from ._ray_worker import EpisodeWorker, GroupSpec, LimiterActor, WorkerSpec, worker_settings
from ._results import ResultsFile
from ._settings import RunSettings
from ._stage import StagedStore, stage_chunks

logger = logging.getLogger("clinseek.runner")

NAMESPACE = "clinseek"
"""Ray namespace of the actors (``ray list actors`` names them ``clinseek-<run>-worker-<i>``)."""
MAX_DEATHS = 2
"""Workers that may die under one job before it is written as an ``infra_error`` row."""
READY_TIMEOUT_S = 600.0
"""How long a new worker may take to start (an autoscaling cluster may first add a node)."""
_ACTOR_CALLS = 16
"""Actor calls a worker serves at once (collect, submits, pauses, ready, configure, close); its jobs
are tasks of its event loop, not actor calls."""


@dataclass(slots=True)
class _Worker:
    handle: Any
    name: str
    gpus: float
    slots: int
    """Jobs it runs at once: its share of the run's concurrency."""
    load: int = 0
    """Jobs out on it (running or queued there)."""
    alive: bool = True
    info: dict[str, Any] = field(default_factory=dict)


    out: dict[int, tuple[Job, int]] = field(default_factory=dict)
    """Ticket -> (job, deaths so far) of the jobs sent to this worker whose rows have not come back."""


@dataclass(slots=True)
class _Outcome:
    """What came back: rows of a worker's jobs, its death, or a replacement worker (``started``)."""

    worker: _Worker
    rows: list[tuple[int, ResultRow]] = field(default_factory=list)
    died: BaseException | None = None
    started: bool = False


class RayExecutor:
    """The Ray side of one ``run_benchmark`` call: cluster connection, workers, limiter.

    Use :meth:`start`, then :meth:`run_jobs` per (benchmark, mode), then :meth:`close`.
    """

    def __init__(self, model: str | ChatModel, settings: RunSettings, store: Path | str, store_id: str | None) -> None:
        self._ray = import_optional("ray", "--executor ray", "ray")
        self.model = model
        self.settings = settings
        self.store = store
        self.store_id = store_id
        self.run_id = uuid.uuid4().hex[:8]
        self._started_ray = False
        self._limiter: Any = None
        self._spec: WorkerSpec | None = None
        self._pools: dict[float, list[_Worker]] = {}
        self._made = 0
        self.replaced = 0
        self.deaths = 0
        self._group: tuple[str, GroupSpec] | None = None

    # --- lifecycle -------------------------------------------------------------------------------
    @classmethod
    async def start(cls, model: str | ChatModel, settings: RunSettings, store: Path | str,
                    store_id: str | None) -> RayExecutor:
        """Join or start Ray, start the limiter, stage the store if asked.

        Raises:
            MissingExtraError: Ray is not installed (the ``ray`` extra).
            ClinseekError: an opened knowledge source (workers need its config), a model object
                that cannot be shipped to the workers, a cluster that cannot be reached.
        """
        from ..knowledge import Knowledge

        if isinstance(settings.sources.knowledge, Knowledge):
            raise ClinseekError("--executor ray opens the knowledge source in every worker: pass its KnowledgeConfig "
                                "(RunSettings.sources.knowledge), not an opened Knowledge")
        self = cls(model, settings, store, store_id)
        self._connect()
        ray = self._ray
        if not isinstance(model, str):
            try:
                ray.cloudpickle.dumps(model)
            except Exception as err:
                raise ClinseekError(f"--executor ray ships the model to every worker, and {type(model).__name__} "
                                    f"cannot be pickled ({type(err).__name__}: {err}); pass it as 'provider:model'"
                                    ) from None
        limiter_cls = ray.remote(LimiterActor)
        self._limiter = limiter_cls.options(
            name=f"clinseek-{self.run_id}-limiter", namespace=NAMESPACE, num_cpus=0, max_concurrency=100_000,
        ).remote(max(1, settings.run.concurrency), settings.model.requests_per_s)
        staged = None
        if settings.run.stage_store and isinstance(store, Path) and store.is_file() and store_id is not None:
            size, chunks = await anyio.to_thread.run_sync(stage_chunks, store, ray.put)
            staged = StagedStore(name=store.name, size=size, store_id=store_id, chunks=chunks)
            logger.info("staged %s (%.1f MB in %d objects) for the Ray workers", store, size / 1e6, len(chunks))
        self._spec = WorkerSpec(model=model, settings=worker_settings(settings), store=str(store.resolve()) if isinstance(store, Path) else store,  # a URL: every worker reads the server
                                store_id=store_id, limiter=self._limiter, staged=staged)
        return self

    def _connect(self) -> None:
        ray = self._ray
        if ray.is_initialized():  # a session the caller opened (a notebook, tests): used as it is
            return
        address = self.settings.run.ray_address or os.environ.get("RAY_ADDRESS") or None
        try:
            if address is None:  # a Ray for this run on this machine: no dashboard, quiet
                ray.init(include_dashboard=False, configure_logging=False, log_to_driver=True,
                         namespace=NAMESPACE)
            else:
                ray.init(address=address, namespace=NAMESPACE, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise ClinseekError(f"cannot reach the Ray cluster at {address or 'a new local Ray'}: {err}") from None
        self._started_ray = True

    async def close(self) -> None:
        """Close the workers' clients, end the actors, and Ray when this run started it."""
        ray = self._ray
        workers = [w for pool in self._pools.values() for w in pool if w.alive]
        with anyio.move_on_after(30):
            for worker in workers:
                try:
                    await worker.handle.close.remote()
                except Exception as err:  # a worker that cannot close is ended all the same
                    logger.debug("%s: close failed: %s", worker.name, err)
        for worker in workers:
            ray.kill(worker.handle)
        if self._limiter is not None:
            ray.kill(self._limiter)
        self._pools.clear()
        if self._started_ray:
            ray.shutdown()

    def describe(self) -> dict[str, Any]:
        """The manifest's ``executor`` entry."""
        run = self.settings.run
        return {"kind": "ray", "address": run.ray_address, "workers": self._workers_wanted(),
                "stage_store": run.stage_store, "worker_gpus": run.worker_gpus}

    # --- workers ---------------------------------------------------------------------------------
    def _workers_wanted(self) -> int:
        wanted = self.settings.run.workers
        if wanted is None:  # one per node that can host an actor (a CPU)
            nodes = [n for n in self._ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0]
            wanted = max(1, len(nodes))
        return max(1, min(wanted, self.settings.run.concurrency))

    def _new_worker(self, gpus: float, slots: int) -> _Worker:
        ray = self._ray
        name = f"clinseek-{self.run_id}-worker-{self._made}"
        self._made += 1
        options: dict[str, Any] = {"name": name, "namespace": NAMESPACE, "max_concurrency": _ACTOR_CALLS,
                                   "max_restarts": 0, "scheduling_strategy": "SPREAD"}
        if gpus:
            options["num_gpus"] = gpus
        handle = ray.remote(EpisodeWorker).options(**options).remote(self._spec, name, slots)
        return _Worker(handle=handle, name=name, gpus=gpus, slots=slots)

    async def _ready(self, worker: _Worker, group: tuple[str, GroupSpec] | None) -> _Worker:
        """Wait for ``worker`` to start (and configure it for ``group``).

        Raises:
            ClinseekError: it failed to start (its error), or did not start in :data:`READY_TIMEOUT_S`.
        """
        try:
            with anyio.fail_after(READY_TIMEOUT_S):
                worker.info = await worker.handle.ready.remote()
                if group is not None:
                    await worker.handle.configure.remote(*group)
        except TimeoutError:
            self._ray.kill(worker.handle)
            raise ClinseekError(f"Ray worker {worker.name} did not start within {READY_TIMEOUT_S:.0f} s: no node has "
                                f"room for it{f' ({worker.gpus:g} GPU)' if worker.gpus else ''}") from None
        except Exception as err:
            self._ray.kill(worker.handle)
            raise ClinseekError(f"Ray worker {worker.name} could not start: {_cause(err)}") from None
        return worker

    async def _pool(self, gpus: float) -> list[_Worker]:
        """The workers reserving ``gpus`` GPUs each, started on first use (all of them, or an error)."""
        if gpus not in self._pools:
            if gpus and not self._ray.cluster_resources().get("GPU"):
                logger.warning("the Ray cluster has no GPU now: workers asking for %g GPU wait for one to join", gpus)
            fresh = [self._new_worker(gpus, share)  # they start at once
                     for share in shares(max(1, self.settings.run.concurrency), self._workers_wanted())]
            self._pools[gpus] = fresh
            for worker in fresh:
                await self._ready(worker, None)
                gpu = f", GPU {','.join(worker.info['gpus'])}" if worker.info.get("gpus") else ""
                logger.info("%s on %s (pid %s, store %s%s)", worker.name, worker.info.get("host"), worker.info.get("pid"),
                            worker.info.get("store"), gpu)
        return self._pools[gpus]

    def _lost(self, worker: _Worker, err: BaseException) -> None:
        """Mark ``worker`` dead (once): end it, free its limiter leases."""
        if not worker.alive:
            return
        worker.alive = False
        self.deaths += 1
        logger.warning("Ray worker %s died (%s); its question runs go to other workers", worker.name, _cause(err))
        self._ray.kill(worker.handle)
        self._limiter.release_owner.remote(worker.name)

    # --- jobs ------------------------------------------------------------------------------------
    async def run_jobs(self, jobs: Sequence[Job], executor: Executor, results: ResultsFile, *,
                       progress: Progress | None = None) -> RowCounts:
        """Run ``jobs`` on the workers and append each row as it comes back (the local engine's contract).

        ``executor`` is the driver's executor of this (benchmark, mode): the workers build theirs
        from its settings; the driver uses it only for rows of jobs no worker could finish.

        Returns:
            The totals of the rows written by this call.

        Raises:
            StoreError: a row failed because the store cannot be read (written first; the other jobs stop).
            ClinseekError: no worker could be started, or every worker died and none could replace it.
        """
        written = RowCounts()
        if not jobs:
            return written
        gpus = self.settings.run.worker_gpus if any(t in IMAGE_TOOLS for t in executor.tools) else 0.0
        group = GroupSpec(mode=executor.mode, benchmark=executor.benchmark, digest=executor.digest,
                          tools=tuple(executor.tools), image_dir=str(executor.image_dir) if executor.image_dir else None,
                          vision=executor.vision, counter=executor.counter, notes=dict(executor.notes))
        key = f"{executor.benchmark}/{executor.mode}/{executor.digest[:12]}"
        self._group = (key, group)
        pool = await self._pool(gpus)
        live = [w for w in pool if w.alive]
        async with anyio.create_task_group() as tg:
            for worker in live:
                tg.start_soon(self._configure, worker, key, group)
        return await self._dispatch(jobs, executor, results, pool, progress, written)

    async def _configure(self, worker: _Worker, key: str, group: GroupSpec) -> None:
        try:
            await worker.handle.configure.remote(key, group)
        except self._ray.exceptions.RayActorError as err:
            self._lost(worker, err)

    async def _dispatch(self, jobs: Sequence[Job], executor: Executor, results: ResultsFile, pool: list[_Worker],
                        progress: Progress | None, written: RowCounts) -> RowCounts:
        assert self._group is not None
        key = self._group[0]
        pending: deque[tuple[Job, int]] = deque((job, 0) for job in jobs)
        send, receive = anyio.create_memory_object_stream[_Outcome](max_buffer_size=math.inf)
        running = starting = 0
        actor_error = self._ray.exceptions.RayActorError
        tickets = itertools.count()
        failure: ClinseekError | None = None

        waiting: dict[str, Any] = {}
        """Worker name -> its collect call in flight (cancelled when this group ends)."""

        async def collect(worker: _Worker) -> None:
            """Bring back the worker's rows, many per reply, until it dies or this group ends."""
            while True:
                waiting[worker.name] = ref = worker.handle.collect.remote(key)
                try:
                    rows: list[tuple[int, ResultRow]] = await ref
                except Exception as err:  # it died, or its rows could not come back (serialization...): its
                    waiting.pop(worker.name, None)  # jobs go to other workers, as a dead worker's do
                    await send.send(_Outcome(worker, died=err))
                    return
                waiting.pop(worker.name, None)
                await send.send(_Outcome(worker, rows=rows))

        async def submit(worker: _Worker, batch: list[tuple[int, Job]]) -> None:
            try:
                await worker.handle.submit.remote(key, batch)
            except actor_error:  # its collect reports the death
                pass
            except Exception as err:  # the jobs could not reach it: they go to other workers
                await send.send(_Outcome(worker, died=err))

        async def replace_worker(gpus: float, slots: int) -> None:
            fresh = self._new_worker(gpus, slots)
            try:
                await self._ready(fresh, self._group)
            except ClinseekError as err:
                logger.warning("no replacement: %s", err)
                fresh.alive = False
            await send.send(_Outcome(fresh, started=True))

        def refill() -> None:
            """Hand the pending jobs to the workers with room, one actor call per worker."""
            nonlocal running
            batches: dict[str, tuple[_Worker, list[tuple[int, Job]]]] = {}
            while pending and (free := pick()) is not None:
                job, deaths = pending.popleft()
                ticket = next(tickets)
                free.out[ticket] = (job, deaths)
                free.load += 1
                running += 1
                batches.setdefault(free.name, (free, []))[1].append((ticket, job))
            for target, batch in batches.values():
                tg.start_soon(submit, target, batch)

        def pick() -> _Worker | None:
            free = [w for w in pool if w.alive and w.load < w.slots + queued(w.slots)]
            return min(free, key=lambda w: w.load - w.slots) if free else None

        def write(row: ResultRow) -> ClinseekError | None:
            results.append(row)
            written.add(row)
            if progress is not None:
                progress.update(row)
            return store_failure(row)

        async with anyio.create_task_group() as tg:
            for live in pool:
                if live.alive:
                    tg.start_soon(collect, live)
            while pending or running or starting:
                refill()
                if not running and not starting:
                    failure = ClinseekError(f"every Ray worker died and none could replace them; {len(pending)} "
                                            "question runs were not run (rerun the same command to resume)")
                    break
                outcome = await receive.receive()
                worker = outcome.worker
                if outcome.started:  # a replacement started (or could not)
                    starting -= 1
                    if worker.alive:
                        pool.append(worker)
                        tg.start_soon(collect, worker)
                    continue
                if outcome.died is not None:
                    first = worker.alive
                    self._lost(worker, outcome.died)
                    if first and self.replaced < MAX_DEATHS * self._workers_wanted():
                        self.replaced += 1
                        starting += 1
                        tg.start_soon(replace_worker, worker.gpus, worker.slots)
                    lost, worker.out = worker.out, {}
                    running -= len(lost)
                    worker.load = 0
                    for job, deaths in reversed(lost.values()):  # back to the front of the queue, in order
                        if deaths + 1 < MAX_DEATHS:
                            pending.appendleft((job, deaths + 1))
                        else:  # an infra_error row (redone on resume), never a StoreError
                            write(executor.error_row(job, outcome.died))
                    continue
                rows = [row for ticket, row in outcome.rows
                        if worker.out.pop(ticket, None) is not None]  # never another's: each ticket goes once
                running -= len(rows)
                worker.load -= len(rows)
                refill()  # the worker's next runs leave before its rows are written (a wave's rows come together)
                for row in rows:
                    failure = write(row)
                    if failure is not None:
                        break
                if failure is not None:
                    break
            tg.cancel_scope.cancel()  # jobs still out when the run stops (a StoreError) are not written
        for ref in waiting.values():  # a worker's next group starts with no stale collect waiting on it
            self._ray.cancel(ref)
        if failure is not None:
            raise failure
        return written

    async def limiter_stats(self) -> dict[str, int]:
        """The cluster limiter's counts (granted calls, most in flight at once)."""
        stats: dict[str, int] = await self._limiter.stats.remote()
        return stats


def queued(slots: int) -> int:
    """Jobs a worker that runs ``slots`` at once holds queued beyond them: as many again.

    Runs that started together end together (the model answers a wave of them at once), so a
    worker must hold the successors of a whole wave: with a quarter of its share queued (sessions
    6-8), 7-10 % of its slot time passed with an empty queue, waiting for the driver's round trip
    (docs/ray.md, "Session 9"). A worker that dies loses its queued runs too; they go back to the
    front of the driver's queue.
    """
    return max(1, slots)


def shares(concurrency: int, workers: int) -> list[int]:
    """Each worker's share of ``concurrency`` (jobs run at once): as even as can be, summing to it."""
    return [concurrency // workers + (i < concurrency % workers) for i in range(workers)]


def _cause(err: BaseException) -> str:
    """The first line of the error a Ray exception carries (its cause for a task error)."""
    cause = getattr(err, "cause", None)
    inner = cause if isinstance(cause, BaseException) else err
    text = str(inner).strip().splitlines()
    return f"{type(inner).__name__}: {text[-1] if text else ''}".rstrip(": ")
