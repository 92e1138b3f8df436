"""One job → one result row: build the run's own sealed episode, run the loop, record everything."""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio

from .._threads import run_cpu_bound, usable_cpus
from ..agent import (
    AgentOutcome,
    EpisodeSession,
    linked_evidence,
    open_question_session,
    run_agent,
    run_curated,
    verbatim_package,
)
from ..bench import episode_key
from ..episode import DEFAULT_MEMORY_LIMIT, StoreReader, build_episode, open_store_reader
from ..models import ESTIMATE, ChatModel, ImageRef, Message, TokenCounter, accepts_images, price_known
from ..records import ResultRow, Status
from ..tools import BROWSER_TOOLS, ToolContext
from ._engine import Job
from ._identity import question_hash

if TYPE_CHECKING:
    from ..bench import InvalidRow, Question
    from ..knowledge import Knowledge
    from ._settings import RunSettings

_MANIFEST_SKIP = {
    "qid", "benchmark", "task", "task_type", "category", "subject_id", "hadm_id", "prediction_time",
    "candidates", "label", "label_aliases", "answer_type", "label_raw", "curated_text", "question_text", "schema_version",
}


def message_record(message: Message) -> dict[str, Any]:
    """One trajectory message as a result row records it: fields left at their default are omitted,
    but every tool call keeps its ``arguments`` exactly as decoded (``{}`` stays ``{}``) and, when the
    model's text was not a JSON object, that text (``raw_arguments``) with ``error_kind``/``error``."""
    out = message.model_dump(mode="json", exclude_defaults=True)
    for call, recorded in zip(message.tool_calls, out.get("tool_calls", []), strict=True):
        recorded["arguments"] = call.model_dump(mode="json")["arguments"]
    return out


def _manifest_fields(question: Question) -> dict[str, Any]:
    """The question's other fields for the row (never the gold label or the curated package)."""
    return question.model_dump(mode="json", exclude=_MANIFEST_SKIP)


def question_row_fields(question: Question) -> dict[str, Any]:
    """The fields of a result row that come from its question: ``task``, ``task_type``, ``category``,
    ``question_hash``, ``policy_version``, ``gold``, ``gold_aliases``, ``answer_type`` (multimodal only),
    ``candidates``, ``subject_id``, ``hadm_id``, ``prediction_time`` and ``manifest`` (the other fields,
    never the gold label or the curated package). The gold label is there: never show these to a model."""
    q = question
    return dict(
        task=q.task, task_type=q.task_type, category=q.category, question_hash=question_hash(q),
        policy_version=q.policy, gold=list(q.label), gold_aliases=[list(a) for a in q.label_aliases],
        answer_type=q.answer_type if q.task_type == "multimodal" else None, candidates=list(q.candidates),
        subject_id=q.subject_id, hadm_id=q.hadm_id, prediction_time=q.prediction_time.isoformat(sep=" "),
        manifest=_manifest_fields(q),
    )


def row_status(status: Status, answer: Sequence[str] | None, error: str | None) -> tuple[Status, str | None]:
    """The ``(status, error)`` a result row records: an ``answered`` run whose answer holds no item is
    ``no_answer`` (the scorer counts it so: an empty answer is never a valid one)."""
    if status == "answered" and not answer:
        return "no_answer", error or "the answer held no item"
    return status, error


def _prepare(reader: StoreReader, count: int) -> None:
    """Create ``count`` sealed databases for the run's episodes ahead of their first queries; a failure here is left to
    the episodes (each then creates its own database and reports what fails).

    Runs on a thread that is not a daemon: the interpreter ending a daemon thread inside ``duckdb.connect`` aborts the
    process (SIGABRT); a process that ends without closing the executor waits for the few databases left instead, and
    :meth:`Executor.close` stops it after the one being created (:meth:`~clinseek.episode.SealedPool.close`)."""
    try:
        reader.sealed.prepare(count, DEFAULT_MEMORY_LIMIT)
    except Exception:
        return


def _now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="seconds")


class Executor:
    """Runs jobs of one (benchmark, mode, model) and turns outcomes into rows.

    ``knowledge`` (shared, stateless) backs the browser tools when ``tools`` offers them: each agent
    job gets its own ``PageBrowser`` in its own ``ToolContext``. ``vision`` (default: the model's
    declared ``supports_vision``) says whether images are sent or replaced by a note. ``store_id``
    (:func:`store_identity` of ``store``) and each question's :func:`question_hash` go in every row;
    ``notes`` (qid -> what an explicit flag allowed) go in its rows' ``input_warnings``.
    ``counter`` counts tokens for the budgets (compaction, the Curated Input budget).

    Episodes are built from one store reader per executor (:meth:`reader`: opened by the first build,
    shared by every job of the run); :meth:`close` closes it once the run's jobs are done.
    """

    def __init__(self, *, store: Path | str, mode: Literal["agent", "curated"], model: ChatModel, benchmark: str,
                 digest: str, settings: RunSettings, tools: Sequence[str], image_dir: Path | None = None,
                 knowledge: Knowledge | None = None, vision: bool | None = None,
                 store_id: str | None = None, counter: TokenCounter = ESTIMATE,
                 notes: Mapping[str, Sequence[str]] | None = None, episodes_at_once: int = 0,
                 jobs: int | None = None) -> None:
        self.knowledge = knowledge
        self.episodes_at_once = episodes_at_once
        """Agent episodes the run holds at once (its concurrency, at most its jobs): that many sealed databases are
        created on threads of their own (one per usable CPU) when the reader opens
        (:meth:`~clinseek.episode.SealedPool.prepare`)."""
        self.jobs = jobs
        """The run's agent jobs, when known: once the last has opened its session the reader's pool winds down (no
        database kept beyond what open episodes may still take: :meth:`~clinseek.episode.SealedPool.wind_down`)."""
        self._opened = 0
        self.counter = counter
        self.notes = notes or {}
        self.store_id = store_id
        self.vision = accepts_images(model) if vision is None else vision
        self.store = store
        self.image_dir = image_dir
        self.mode = mode
        self.model = model
        self.benchmark = benchmark
        self.digest = digest
        self.settings = settings
        self.tools = tools
        self._reader: StoreReader | None = None
        self._reader_lock = threading.Lock()

    def reader(self) -> StoreReader:
        """The run's store reader (opened on first use, from any worker thread).

        Raises:
            StoreError: the store cannot be opened (the job asking becomes an infra-error row).
        """
        with self._reader_lock:
            if self._reader is None:
                self._reader = open_store_reader(self.store)
                if self.mode == "agent" and self.episodes_at_once > 1:
                    for i in range(min(usable_cpus(), self.episodes_at_once)):  # DuckDB's work: beside the GIL
                        threading.Thread(target=_prepare, args=(self._reader, self.episodes_at_once),
                                         name=f"clinseek-sealed-prepare-{i}").start()  # not daemons: see _prepare
            return self._reader

    def close(self) -> None:
        """Close the store reader (after every job's episode is closed). Idempotent."""
        with self._reader_lock:
            reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()

    def _config(self, job: Job) -> Any:
        seed = self.settings.model.generate.seed
        base = self.settings.run.seed if seed is None else seed
        return self.settings.model.generate.model_copy(update={"seed": base * 1000 + job.run_index})

    def _open(self, job: Job) -> EpisodeSession:
        """The agent job's session (its own sealed episode, tools, task turns, linked images); blocking."""
        browser = self.knowledge if any(t in BROWSER_TOOLS for t in self.tools) else None
        reader = self.reader()
        try:
            return open_question_session(
                reader, job.question, tools=self.tools, limits=self.settings.limits, budget=self.settings.budget,
                sources=replace(self.settings.sources, knowledge=browser), artifact_dir=self._artifacts(job),
                fitted_dir=self._image_dir() / "fitted", vision=self.vision)
        finally:
            with self._reader_lock:
                self._opened += 1
                last = self._opened == self.jobs
            if last:
                reader.sealed.wind_down()

    async def _agent(self, job: Job) -> AgentOutcome:
        with anyio.CancelScope(shield=True):  # a job cancelled while its session opens gets it, and closes it below
            session = await run_cpu_bound(self._open, job)
        run = functools.partial(run_agent, self.model, session.context, job.question, budget=self.settings.budget,
                                config=self._config(job), tools=session.tool_names, images=session.images,
                                linked=session.linked, vision=self.vision, counter=self.counter)
        try:  # ImagingError (a linked image without a file) is raised above: the row becomes an infra error
            transport = self.settings.run.tool_transport
            if transport is None:  # the episode closes with the run's last blocking work (one hand-off)
                return await run(on_end=session.close)
            async with transport.connect(session, job.question) as channel:
                return await run(channel=channel)
        finally:
            if not session.closed:  # a channel's run, a cancelled one (shielded: a cancelled job still closes its
                with anyio.CancelScope(shield=True):  # episode, e.g. when the run stops on a gone endpoint)
                    await session.aclose()

    def _image_dir(self) -> Path:
        if self.image_dir is None:  # a bare Executor (tests): a private temporary folder
            import tempfile

            self.image_dir = Path(tempfile.mkdtemp(prefix="clinseek_images_"))
        return self.image_dir

    def _artifacts(self, job: Job) -> Path:
        """The folder the imaging tools of one (question, run) write to."""
        return self._image_dir() / "artifacts" / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', job.qid)}__run_{job.run_index}"

    def _curated_images(self, job: Job) -> list[ImageRef]:
        """The linked images of a multimodal question with a CXR root (blocking), else none."""
        question: Question = job.question
        sources = self.settings.sources
        if question.task_type != "multimodal" or sources.cxr_root is None:
            return []
        with build_episode(self.reader(), episode_key(question)) as episode:
            _, images = linked_evidence(ToolContext(episode), question, cxr_root=sources.cxr_root,
                                        imaging=sources.imaging, max_images=sources.max_images,
                                        artifact_dir=self._artifacts(job), fitted_dir=self._image_dir() / "fitted")
        return images

    async def _curated(self, job: Job) -> AgentOutcome:
        question: Question = job.question
        verbatim, embeds = verbatim_package(question)

        def prepare() -> tuple[str, list[ImageRef]]:  # the rendering and the linked images: one hand-off
            return self._render(question) if verbatim is None else verbatim, self._curated_images(job)

        if verbatim is None or (question.task_type == "multimodal" and self.settings.sources.cxr_root is not None):
            package, images = await run_cpu_bound(prepare)
        else:
            package, images = verbatim, []
        return await run_curated(self.model, question, package, embeds_question=embeds, budget=self.settings.budget,
                                 config=self._config(job), images=images, vision=self.vision)

    def _render(self, question: Question) -> str:
        """The question's rendered Curated Input (blocking: the first build opens the run's reader)."""
        from ..bench import render_curated  # builds the question's own sealed episode, as the tools do

        return render_curated(question, self.reader(), budget_tokens=self.settings.budget.curated_budget_tokens,
                              counter=self.counter).text

    async def execute(self, job: Job) -> ResultRow:
        """Run one job; failures inside the loop come back as ``infra_error`` outcomes."""
        return self.row(job, *await self.run(job))

    async def run(self, job: Job) -> tuple[AgentOutcome, float, str]:
        """Run one job up to its outcome: ``(outcome, latency_s, started_at)``, the rest of :meth:`row`'s
        arguments (a Ray worker builds the row once its next runs' requests have left)."""
        started_at, started = _now(), time.perf_counter()
        outcome = await (self._agent(job) if self.mode == "agent" else self._curated(job))
        return outcome, time.perf_counter() - started, started_at

    def _base(self, job: Job) -> dict[str, Any]:
        q: Question = job.question
        return dict(
            qid=q.qid, run_index=job.run_index, runs_per_question=self.settings.run.runs_per_question,
            session_id=f"{q.qid}__run_{job.run_index}__{self.digest[:8]}", benchmark=self.benchmark,
            mode=self.mode, model=self.model.name, config_hash=self.digest, store_id=self.store_id,
            **question_row_fields(q),
        )

    def row(self, job: Job, outcome: AgentOutcome, latency_s: float, started_at: str) -> ResultRow:
        """The result row of a finished job.

        An ``answered`` outcome whose answer holds no item is written as ``no_answer`` (the scorer
        counts it so: an empty answer is never a valid one).
        """
        status, error = row_status(outcome.status, outcome.answer, outcome.error)
        return ResultRow(
            **self._base(job), prompt_version=outcome.prompt_version, status=status,
            completed=outcome.completed, stop_reason=outcome.stop_reason, error=error,
            error_type=outcome.error_type, answer=outcome.answer, invalid_answer=outcome.invalid_answer,
            parse_failures=outcome.parse_failures, parse_mode=outcome.parse_mode,
            messages=[message_record(m) for m in outcome.messages],
            usage=outcome.usage, cost_usd=outcome.cost_usd, latency_s=latency_s, turns=outcome.turns,
            tool_calls=outcome.tool_counts(), calls=outcome.calls, tools=outcome.tools,
            reminders=outcome.reminders, compactions=outcome.compactions, started_at=started_at,
            finished_at=_now(), images_sent=outcome.images_sent, images_not_sent=outcome.images_not_sent,
            input_warnings=list(self.notes.get(job.qid, ())),
        )

    def invalid_row(self, bad: InvalidRow, run_index: int) -> ResultRow:
        """The ``invalid_input`` row of a manifest row that cannot run (no episode, no model call)."""
        from ..agent import PROMPT_VERSION

        now = _now()
        return ResultRow(
            qid=bad.qid, run_index=run_index, runs_per_question=self.settings.run.runs_per_question,
            session_id=f"{bad.qid}__run_{run_index}__{self.digest[:8]}", benchmark=self.benchmark, task=bad.task,
            task_type=bad.task_type, category=bad.category, mode=self.mode, model=self.model.name,
            config_hash=self.digest, store_id=self.store_id, prompt_version=PROMPT_VERSION,
            policy_version=bad.policy, status="invalid_input", completed=False, stop_reason="invalid_input",
            error=bad.reason, error_type="InvalidInput", subject_id=bad.subject_id,
            prediction_time=bad.prediction_time, manifest=dict(bad.fields),
            cost_usd=0.0 if price_known(self.model) is True else None, started_at=now,
            finished_at=now,
        )

    def error_row(self, job: Job, exc: BaseException) -> ResultRow:
        """An ``infra_error`` row for an exception outside the loop (episode build, rendering)."""
        from ..agent import PROMPT_VERSION

        return ResultRow(
            **self._base(job), prompt_version=PROMPT_VERSION, status="infra_error", completed=False,
            stop_reason="exception", error=f"{type(exc).__name__}: {exc}", error_type=type(exc).__name__,
            cost_usd=0.0 if price_known(self.model) is True else None, finished_at=_now(),
        )
