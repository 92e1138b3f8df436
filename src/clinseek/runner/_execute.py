"""One job → one result row: build the run's own sealed episode, run the loop, record everything."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio.to_thread

from ..agent import AgentOutcome, LinkedEvidence, run_agent, run_curated, verbatim_package
from ..episode import CandidateSource, EpisodeKey, StoreReader, build_episode, open_store
from ..imaging import CxrLocator, ImagingSession, LinkedImage, fit_for_model, parse_cxr_path
from ..models import ESTIMATE, ChatModel, ImageRef, Message, TokenCounter, accepts_images, price_known
from ..tools import BROWSER_TOOLS, IMAGE_TOOLS, ToolContext, attach_browser, attach_imaging
from ._engine import Job
from ._identity import question_hash
from ._rows import ResultRow

if TYPE_CHECKING:
    from ..bench import InvalidRow, Question
    from ..episode import Episode
    from ..knowledge import Knowledge
    from ._run import RunSettings

_MANIFEST_SKIP = {
    "qid", "benchmark", "task", "task_type", "category", "subject_id", "hadm_id", "prediction_time",
    "candidates", "label", "label_aliases", "answer_type", "label_raw", "curated_text", "question_text", "schema_version",
}


def episode_key(question: Question) -> EpisodeKey:
    """The sealed-episode key of ``question``: patient, cutoff, policy, hidden encounters, CXR links."""
    return EpisodeKey(
        subject_id=question.subject_id, prediction_time=question.prediction_time, policy=question.policy,
        target_hadm_id=question.target_hadm_id, target_stay_id=question.target_stay_id,
        study_ids=tuple(question.study_ids), dicom_ids=tuple(question.dicom_ids),
        hide_cxr_reports=question.hide_cxr_reports,
    )


def candidate_lists(question: Question) -> dict[str, list[str]]:
    """The question's own candidate list as the episode's ``candidates.<task>_candidates`` table.

    Only decision-making questions get one (a yes/no list is not a vocabulary); the table is named
    after the task in lower case with non-word characters as ``_``. :meth:`Executor.candidates` adds the
    AgentEHR-Bench tables of questions without a list.
    """
    if not question.candidates or question.task_type == "risk_prediction":
        return {}
    return {re.sub(r"\W", "_", question.task.lower()): list(question.candidates)}


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

    def __init__(self, *, store: Path, mode: Literal["agent", "curated"], model: ChatModel, benchmark: str,
                 digest: str, settings: RunSettings, tools: Sequence[str], image_dir: Path | None = None,
                 knowledge: Knowledge | None = None, vision: bool | None = None,
                 store_id: str | None = None, counter: TokenCounter = ESTIMATE,
                 notes: Mapping[str, Sequence[str]] | None = None) -> None:
        self.knowledge = knowledge
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
                self._reader = open_store(self.store)
            return self._reader

    def close(self) -> None:
        """Close the store reader (after every job's episode is closed). Idempotent."""
        with self._reader_lock:
            reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()

    def _config(self, job: Job) -> Any:
        seed = self.settings.generate.seed
        base = self.settings.seed if seed is None else seed
        return self.settings.generate.model_copy(update={"seed": base * 1000 + job.run_index})

    def candidates(self, question: Question) -> dict[str, CandidateSource]:
        """The episode's candidate tables: the question's list, else (AgentEHR-Bench) its task's table from
        ``settings.candidate_tables`` or the store (``clinseek.bench.question_candidates``)."""
        from ..bench import question_candidates

        return question_candidates(question, self.store, self.settings.candidate_tables)

    async def _episode(self, question: Question) -> Episode:
        return await anyio.to_thread.run_sync(
            lambda: build_episode(self.reader(), episode_key(question), candidates=self.candidates(question)))

    async def _agent(self, job: Job) -> AgentOutcome:
        question: Question = job.question
        episode = await self._episode(question)
        try:
            ctx = ToolContext(episode=episode, limits=self.settings.limits, candidates=candidate_lists(question))
            if self.knowledge is not None and any(t in BROWSER_TOOLS for t in self.tools):
                attach_browser(ctx, self.knowledge, self.settings.browser)  # this episode's own pages and budgets
            linked, images = await anyio.to_thread.run_sync(self._linked, ctx, job)
            return await run_agent(self.model, ctx, question, budget=self.settings.budget, config=self._config(job),
                                   tools=self.tools, images=images, linked=linked, vision=self.vision,
                                   counter=self.counter)
        finally:
            await anyio.to_thread.run_sync(episode.close)

    def _linked(self, ctx: ToolContext, job: Job) -> tuple[LinkedEvidence | None, list[ImageRef]]:
        """The linked evidence of a multimodal question: visible images (attached, and the imaging session
        the image tools read) and visible reports (inlined unless hidden). Runs in a worker thread.

        Raises:
            ImagingError: a visible linked image has no file under ``settings.cxr_root`` (the row
                becomes an infra error naming the file; an image is never dropped silently).
        """
        question: Question = job.question
        if question.task_type != "multimodal":
            return None, []
        root = self.settings.cxr_root
        if root is None:  # no images configured: the reports still come from the episode
            rows = ctx.episode.execute("SELECT study_id, text FROM cxr.reports ORDER BY study_id",
                                       tables=("cxr.reports",)).rows \
                if ctx.episode.has_table("cxr.reports") else []
            return LinkedEvidence(reports=tuple((s, t) for s, t in rows if t),
                                  reports_hidden=question.hide_cxr_reports), []
        run_dir = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', question.qid)}__run_{job.run_index}"
        session = attach_imaging(ctx, CxrLocator((Path(root),)), self.settings.imaging,
                                 self._image_dir() / "artifacts" / run_dir)
        chosen = self._chosen(question, session)
        evidence = LinkedEvidence(images=tuple((i.dicom_id, str(i.path)) for i in chosen),
                                  reports=tuple((r.study_id, r.text) for r in session.reports),
                                  reports_hidden=question.hide_cxr_reports,
                                  imaging_tools=any(t in IMAGE_TOOLS for t in self.tools))
        return evidence, self._refs(chosen)

    def _image_dir(self) -> Path:
        if self.image_dir is None:  # a bare Executor (tests): a private temporary folder
            import tempfile

            self.image_dir = Path(tempfile.mkdtemp(prefix="clinseek_images_"))
        return self.image_dir

    def _chosen(self, question: Question, session: ImagingSession) -> list[LinkedImage]:
        """Visible linked images in the manifest's ``image_paths`` order (others after), at most ``max_images``."""
        order: dict[str, int] = {}
        for n, path in enumerate(question.image_paths):
            ref = parse_cxr_path(path)
            if ref is not None and ref.dicom_id is not None:
                order.setdefault(ref.dicom_id, n)
        ranked = sorted(session.images, key=lambda i: order.get(i.dicom_id, len(order)))
        return ranked[: self.settings.max_images]

    def _refs(self, images: Sequence[LinkedImage]) -> list[ImageRef]:
        """References to model-ready copies (long edge <= 1568 px; JPG/PNG within it are used as they are)."""
        cache = self._image_dir() / "fitted"
        return [ImageRef(path=str(fit_for_model(i.path, cache))) for i in images]

    async def _curated_images(self, job: Job) -> list[ImageRef]:
        question: Question = job.question
        if question.task_type != "multimodal" or self.settings.cxr_root is None:
            return []
        episode = await self._episode(question)
        try:
            _, images = await anyio.to_thread.run_sync(self._linked, ToolContext(episode=episode), job)
            return images
        finally:
            await anyio.to_thread.run_sync(episode.close)

    async def _curated(self, job: Job) -> AgentOutcome:
        question: Question = job.question
        package, embeds = verbatim_package(question)
        if package is None:
            package = await self._render(question)
        images = await self._curated_images(job)
        return await run_curated(self.model, question, package, embeds_question=embeds, budget=self.settings.budget,
                                 config=self._config(job), images=images, vision=self.vision)

    async def _render(self, question: Question) -> str:
        from ..bench import render_curated  # builds the question's own sealed episode, as the tools do

        def render() -> str:  # in a worker thread: the first build opens the run's reader there
            return render_curated(question, self.reader(), budget_tokens=self.settings.budget.curated_budget_tokens,
                                  counter=self.counter).text

        return await anyio.to_thread.run_sync(render)

    async def execute(self, job: Job) -> ResultRow:
        """Run one job; failures inside the loop come back as ``infra_error`` outcomes."""
        started_at, started = _now(), time.perf_counter()
        outcome = await (self._agent(job) if self.mode == "agent" else self._curated(job))
        return self.row(job, outcome, time.perf_counter() - started, started_at)

    def _base(self, job: Job) -> dict[str, Any]:
        q: Question = job.question
        return dict(
            qid=q.qid, run_index=job.run_index, runs_per_question=self.settings.runs_per_question,
            session_id=f"{q.qid}__run_{job.run_index}__{self.digest[:8]}", benchmark=self.benchmark,
            task=q.task, task_type=q.task_type, category=q.category, mode=self.mode, model=self.model.name,
            config_hash=self.digest, question_hash=question_hash(q), store_id=self.store_id, policy_version=q.policy, gold=list(q.label),
            gold_aliases=[list(a) for a in q.label_aliases], answer_type=q.answer_type if q.task_type == "multimodal" else None,
            candidates=list(q.candidates),
            subject_id=q.subject_id, hadm_id=q.hadm_id, prediction_time=q.prediction_time.isoformat(sep=" "),
            manifest=_manifest_fields(q),
        )

    def row(self, job: Job, outcome: AgentOutcome, latency_s: float, started_at: str) -> ResultRow:
        """The result row of a finished job.

        An ``answered`` outcome whose answer holds no item is written as ``no_answer`` (the scorer
        counts it so: an empty answer is never a valid one).
        """
        status, error = outcome.status, outcome.error
        if status == "answered" and not outcome.answer:
            status, error = "no_answer", error or "the answer held no item"
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
            qid=bad.qid, run_index=run_index, runs_per_question=self.settings.runs_per_question,
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
