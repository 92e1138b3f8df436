"""``run_benchmark``: questions × runs → ``DIR/<benchmark>/<mode>/<model-slug>/results.jsonl``.

Each (question, run_index) gets its own freshly built sealed episode (in a worker thread) and
its own tool context; nothing is shared between runs but the model client, its rate limiter
and the optional response cache.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field

from .._version import __version__
from ..agent import PROMPT_VERSION, offered_tools
from ..bench import select_questions
from ..episode import open_store_reader
from ..errors import ClinseekError
from ..knowledge import Knowledge
from ..models import (
    ESTIMATE,
    ChatModel,
    PreflightReport,
    TokenCounter,
    accepts_images,
    get_model,
    preflight,
)
from ..records import RunManifest
from ..refformat import reference_results_dir
from ..store import is_postgres_url, store_file_problem
from ..tools import BROWSER_TOOLS
from ._cache import CachedModel, ResponseCache
from ._counts import RowCounts
from ._engine import Job, run_jobs
from ._execute import Executor
from ._identity import question_hash, store_identity
from ._knowledge import (
    close_knowledge,
    knowledge_identity,
    knowledge_record,
    open_run_knowledge,
    wants_browser,
)
from ._manifest import config_hash, git_commit, package_versions, safe_base_url, write_manifest
from ._outage import MIN_THRESHOLD, EndpointGone, EndpointWatch
from ._progress import Progress
from ._reflayout import codec_for, reference_split
from ._results import ResultsFile, RunLock
from ._retry import ProviderLimiter, ResilientModel
from ._routing import EndpointRouter, routed
from ._settings import RunSettings
from ._store_check import check_store_subjects

if TYPE_CHECKING:
    from ..bench import InvalidRow, Question
    from ._ray import RayExecutor

RunMode = Literal["agent", "curated", "both"]

logger = logging.getLogger("clinseek.runner")


class ModeSummary(BaseModel):
    """Counts of one (benchmark, mode, model) results directory after a run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    benchmark: str
    mode: Literal["agent", "curated"]
    model: str
    out_dir: str
    total: int
    """Rows expected: questions × runs_per_question."""
    resumed: int
    """Rows of this call's (question, run) pairs already done before it (skipped)."""
    ran: int
    superseded: int = 0
    """Rows of this call's qids that answered another question (another benchmark build under the
    same qids) or ran on another store: moved to ``superseded.jsonl`` and run again."""
    answered: int
    """Rows of this call's questions (resumed + ran) with a valid answer; rows of other questions
    in the same results file are never counted."""
    no_answer: int
    infra_errors: int
    invalid_input: int = 0
    """Rows of manifest rows that could not be run (``invalid_input``: their ``error`` says why)."""
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    """``None`` when any call's price was unknown."""
    wall_s: float
    parse_modes: dict[str, int] = Field(default_factory=dict)
    """Answered rows of this call's questions by how the answer was read (``finish_call``,
    ``answer_tag``, fallbacks...; docs/agent.md)."""


class RunSummary(BaseModel):
    """What ``run_benchmark`` did, one entry per mode."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    runs: list[ModeSummary]
    invalid_reasons: list[str] = Field(default_factory=list)
    """Why each manifest row of this call's tasks recorded as ``invalid_input`` could not run (file, row,
    field and what was expected), in manifest order."""

    @property
    def infra_errors(self) -> int:
        """Infra-error rows over all modes."""
        return sum(r.infra_errors for r in self.runs)

    @property
    def invalid_input(self) -> int:
        """Invalid-input rows over all modes."""
        return sum(r.invalid_input for r in self.runs)


def model_slug(name: str) -> str:
    """A directory name for ``provider:model`` (``openai:Qwen/Qwen3.5`` → ``openai_qwen_qwen3.5``)."""
    return re.sub(r"[^a-z0-9._-]+", "_", name.lower()).strip("_")


def _config(mode: str, model: ChatModel, settings: RunSettings, tools: Sequence[str], policies: list[str],
            knowledge: dict[str, object] | None = None) -> dict[str, object]:
    generate = settings.model.generate.model_dump(mode="json", exclude={"seed", "max_output_tokens"})
    browser = mode == "agent" and any(t in BROWSER_TOOLS for t in tools)
    return {
        "vision": _vision(model, settings),
        "knowledge": knowledge_identity(knowledge, asdict(settings.sources.browser)) if browser else None,
        "mode": mode, "model": model.name, "base_url": safe_base_url(settings.model.base_url),
        "prompt_version": PROMPT_VERSION, "policies": policies, "budget": settings.budget.as_dict(),
        "limits": settings.limits.as_dict() if mode == "agent" else None, "generate": generate,
        "tools": list(tools) if mode == "agent" else [], "seed": settings.run.seed,
        "images": str(settings.sources.cxr_root) if settings.sources.cxr_root else None,
        "max_images": settings.sources.max_images,
        "imaging": settings.sources.imaging.as_dict() if settings.sources.cxr_root else None,
        "tool_protocol": settings.model.tool_protocol,
        # only when set, so that runs without it keep their configuration hash
        **({"candidate_tables": str(settings.sources.candidate_tables)} if settings.sources.candidate_tables else {}),
    }


def _summary(benchmark: str, mode: str, model: str, out_dir: Path, total: int, resumed: RowCounts,
             ran: RowCounts, wall_s: float, superseded: int) -> ModeSummary:
    rows = resumed + ran
    return ModeSummary(
        benchmark=benchmark, mode=mode, model=model, out_dir=str(out_dir), total=total,  # type: ignore[arg-type]
        resumed=resumed.rows, ran=ran.rows, superseded=superseded, answered=rows.answered, no_answer=rows.no_answer,
        infra_errors=rows.infra_errors, invalid_input=rows.invalid_input, input_tokens=rows.input_tokens,
        output_tokens=rows.output_tokens, cost_usd=rows.cost_usd, wall_s=wall_s,
        parse_modes=dict(sorted(rows.parse_modes.items())),
    )


def _vision(model: ChatModel, settings: RunSettings) -> bool:
    """Whether images are sent: the override, else the model's declared capability."""
    return accepts_images(model) if settings.model.vision is None else settings.model.vision


@dataclass(frozen=True, slots=True)
class _Shared:
    """What every mode of one ``run_benchmark`` call shares besides the model."""

    knowledge: Knowledge | None = None
    record: dict[str, object] | None = None
    """The manifest's ``knowledge`` entry (``None`` when no browser tools are offered)."""
    store_id: str | None = None
    """:func:`store_identity` of the store (``None`` when there is no store file)."""
    preflight: PreflightReport | None = None
    """What the pre-flight found (``None`` when it did not run)."""
    counter: TokenCounter = ESTIMATE
    """What the token budgets count with."""
    totals: dict[str, int] = field(default_factory=dict)
    """Questions per benchmark before ``--tasks``/``--limit`` (names the reference layout's split)."""
    ray: RayExecutor | None = None
    """The Ray executor of the call (``settings.run.executor == "ray"``), else ``None``: the local engine."""
    tool_route: dict[str, Any] | None = None
    """``RunOptions.tool_transport.describe()`` of an agent mode (``None``: tools called in process)."""
    watch: EndpointWatch | None = None
    """The model endpoint's watch (the local engine stops the run when it says the endpoint is gone)."""


@dataclass(frozen=True, slots=True)
class _Group:
    """The rows of one benchmark folder: questions to run, manifest rows to record as invalid."""

    questions: list[Question] = field(default_factory=list)
    invalid: list[InvalidRow] = field(default_factory=list)
    notes: Mapping[str, Sequence[str]] = field(default_factory=dict)
    manifest: dict[str, Question | None] = field(default_factory=dict)
    """Every row of the benchmark's manifest by qid, selected by ``--tasks``/``--limit`` or not (``None``: an
    invalid row): a results row of a qid outside it is another build's, one of a qid inside it must answer it."""


async def _run_mode(group: _Group, store: Path | str, mode: Literal["agent", "curated"], model: ChatModel,
                    out: Path, benchmark: str, settings: RunSettings, shared: _Shared) -> ModeSummary:
    questions = group.questions
    browser = shared.knowledge is not None
    kinds = {q.task_type for q in questions} | {r.task_type for r in group.invalid}
    tools = tuple(settings.run.tools or _default_tools(kinds, settings, browser=browser)) if mode == "agent" else ()
    policies = sorted({q.policy for q in questions} | {r.policy for r in group.invalid})
    transport = settings.run.tool_transport if mode == "agent" else None
    shared = replace(shared, tool_route=await transport.describe() if transport is not None else None)
    config = _config(mode, model, settings, tools, policies, shared.record)
    digest = config_hash({**config, "tool_transport": shared.tool_route} if shared.tool_route else config)
    out_dir = out / benchmark / mode / model_slug(model.name)
    if settings.run.layout == "reference":
        split = settings.run.split or reference_split(len(questions), shared.totals.get(benchmark, len(questions)))
        task_type = questions[0].task_type if questions else group.invalid[0].task_type
        out_dir = reference_results_dir(out, benchmark, mode, split, model.name, task_type)
    with RunLock(out_dir):
        return await _run_locked(group, store, mode, model, out_dir, benchmark, settings, tools, policies, digest,
                                 shared if mode == "agent" else replace(shared, knowledge=None, record=None))


def _manifest(benchmark: str, mode: Literal["agent", "curated"], model: ChatModel, settings: RunSettings,
              tools: tuple[str, ...], policies: list[str], digest: str, questions: int, shared: _Shared) -> RunManifest:
    browser = shared.knowledge is not None and any(t in BROWSER_TOOLS for t in tools)
    record = shared.knowledge.describe() if browser and shared.knowledge else None
    return RunManifest(
        benchmark=benchmark, mode=mode, model=model.name, base_url=safe_base_url(settings.model.base_url),
        config_hash=digest, prompt_version=PROMPT_VERSION, policy_versions=policies, code_version=__version__,
        git_commit=git_commit(), seed=settings.run.seed, runs_per_question=settings.run.runs_per_question,
        questions=questions, store_id=shared.store_id, concurrency=settings.run.concurrency, budget=settings.budget.as_dict(),
        limits=settings.limits.as_dict(),
        generate=settings.model.generate.model_dump(mode="json", exclude={"max_output_tokens"}),
        retry=settings.model.retry.as_dict(), tools=list(tools), response_cache=settings.model.cache_dir is not None,
        packages=package_versions(), vision=_vision(model, settings),
        knowledge={**(shared.record or {}), **(record or {})} if browser else None,
        browser=asdict(settings.sources.browser) if browser else None,
        preflight=shared.preflight.model_dump(mode="json") if shared.preflight else None,
        token_counter=shared.counter.name, tool_transport=shared.tool_route,
        executor=shared.ray.describe() if shared.ray is not None else {"kind": "local"},
        endpoints=[u for u in (safe_base_url(e) for e in settings.model.endpoints) if u],
    )


_COMPARED = ("model", "base_url", "prompt_version", "policy_versions", "seed", "runs_per_question", "budget",
             "limits", "generate", "retry", "tools", "vision", "knowledge", "browser")
"""Recorded run settings named when a rerun's configuration differs (a subset: the hash covers more)."""


def _differences(path: Path, new: RunManifest) -> str:
    """``"; differs: seed 0 -> 1, ..."`` from the recorded manifest, or ``""`` if none is readable."""
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    now = new.model_dump(mode="json")
    diffs = [f"{k} {old.get(k)!r} -> {now.get(k)!r}" for k in _COMPARED if k in old and old.get(k) != now.get(k)]
    return f"; differs: {', '.join(diffs)}" if diffs else ""


async def _run_locked(group: _Group, store: Path | str, mode: Literal["agent", "curated"], model: ChatModel,
                      out_dir: Path, benchmark: str, settings: RunSettings, tools: tuple[str, ...],
                      policies: list[str], digest: str, shared: _Shared) -> ModeSummary:
    questions = group.questions
    results = ResultsFile(out_dir / "results.jsonl", codec=codec_for(settings.run.layout))
    wanted = {qid: (question_hash(q), shared.store_id) for qid, q in group.manifest.items() if q is not None}
    wanted.update({q.qid: (question_hash(q), shared.store_id) for q in questions})
    keys = {(q.qid, i) for q in questions for i in range(settings.run.runs_per_question)}
    try:
        resumable = results.prepare_resume(digest, wanted, known=group.manifest or None)
    except ClinseekError as err:  # another configuration: say which recorded settings differ
        new = _manifest(benchmark, mode, model, settings, tools, policies, digest, len(questions), shared)
        raise ClinseekError(f"{err}{_differences(out_dir / 'run_manifest.json', new)}") from None
    done = [r for r in resumable if (r.qid, r.run_index) in keys]
    finished = {(r.qid, r.run_index) for r in done}
    resumed = RowCounts.of(done)
    del done  # the rows stay on disk, not in memory for the whole run
    if results.superseded:
        logger.warning("%s: %d rows answered other questions (another benchmark build: other questions under the "
                       "same qids, or qids this build does not have) or ran on another store; moved to "
                       "superseded.jsonl (those of this build's questions run again)", out_dir, results.superseded)
    manifest_path = out_dir / "run_manifest.json"
    write_manifest(manifest_path, _manifest(benchmark, mode, model, settings, tools, policies, digest,
                                            len(questions), shared))
    jobs = [Job(q.qid, i, q) for i in range(settings.run.runs_per_question) for q in questions
            if (q.qid, i) not in finished]
    executor = Executor(store=store, mode=mode, model=model, benchmark=benchmark, digest=digest,
                        store_id=shared.store_id,
                        settings=settings, tools=tools, image_dir=out_dir / "images", knowledge=shared.knowledge,
                        vision=_vision(model, settings), counter=shared.counter, notes=group.notes,
                        episodes_at_once=min(settings.run.concurrency, len(jobs)), jobs=len(jobs))
    started = time.perf_counter()
    total = (len(questions) + len(group.invalid)) * settings.run.runs_per_question
    results.open()
    try:
        with Progress(total, f"{benchmark} {mode} {model.name}", enabled=settings.run.progress) as progress:
            progress.resumed(resumed.rows)
            invalid = RowCounts()
            for bad in group.invalid:  # recorded at once, every run: they cost nothing and the manifest may change
                for run_index in range(settings.run.runs_per_question):
                    row = executor.invalid_row(bad, run_index)
                    results.append(row)
                    invalid.add(row)
                    progress.update(row)
            if shared.ray is not None:
                ran = invalid + await shared.ray.run_jobs(jobs, executor, results, progress=progress)
            else:
                ran = invalid + await run_jobs(jobs, routed(executor.execute), executor.error_row, results,
                                               concurrency=settings.run.concurrency, progress=progress,
                                               watch=shared.watch)
    finally:
        results.close()
        await anyio.to_thread.run_sync(executor.close)
        if shared.knowledge is not None:  # the web cache's counts after the run
            write_manifest(manifest_path, _manifest(benchmark, mode, model, settings, tools, policies, digest,
                                                    len(questions), shared))
    return _summary(benchmark, mode, model.name, out_dir, total, resumed, ran, time.perf_counter() - started,
                    results.superseded)


def _default_tools(task_types: set[str], settings: RunSettings, *, browser: bool) -> tuple[str, ...]:
    """Every ``ehr.*`` tool, the three ``browser.*`` tools when the run has a knowledge source, and the
    ``image.*`` tools for multimodal questions when images are configured (the reference's 16 + 3 + 6)."""
    multimodal = settings.sources.cxr_root is not None and "multimodal" in task_types
    return offered_tools(settings.limits, browser=browser, imaging=multimodal)


def _select(questions: Sequence[Question], invalid: Sequence[InvalidRow], tasks: Sequence[str] | None,
            limit: int | None) -> list[Question]:
    """The questions to run (:func:`clinseek.bench.select_questions`); a ``tasks`` name whose rows are all
    invalid selects no question (its invalid rows are still recorded), it is not an unknown task."""
    known = {q.task for q in questions}
    only_invalid = {r.task for r in invalid} - known
    wanted = [t for t in tasks or () if t not in only_invalid]
    if tasks and not wanted:
        return []
    return select_questions(questions, wanted or None, limit)


def _store_source(store: Path | str) -> Path | str:
    """A ``postgresql://`` URL as given (a path would fold its ``//``); anything else as a path."""
    return store if is_postgres_url(store) else Path(store)


def _check_store(store: Path | str, questions: Sequence[Question], mode: RunMode) -> None:
    """Fail fast on a missing store or an unusable PostgreSQL source (rather than one infra-error row per question)."""
    from ..agent import verbatim_package

    needs = mode != "curated" or any(verbatim_package(q)[0] is None for q in questions)
    if needs and isinstance(store, str):  # the server answers, the login, schemas, tables, columns and grants
        open_store_reader(store).close()  # missing patients: their rows become infra errors, as a lost server's
        return
    store = Path(store)
    problem = store_file_problem(store) if needs else None
    if problem:
        raise ClinseekError(problem if store.is_dir() else f"{problem} (build one with 'clinseek data ...')")
    if needs:
        check_store_subjects(store, (q.subject_id for q in questions))


def _model(name: str, settings: RunSettings) -> ChatModel:
    """The model ``name`` at ``settings.model.base_url``; with ``endpoints``, a sticky router over every replica."""
    model = settings.model

    def at(base_url: str | None) -> ChatModel:
        return get_model(name, base_url=base_url, tool_protocol=model.tool_protocol, api_key_env=model.api_key_env,
                         credentials_file=model.credentials_file, price_table=model.price_table)

    if not model.endpoints:
        return at(model.base_url)
    return EndpointRouter([at(url) for url in (model.base_url, *model.endpoints)])


def _watch(model: ChatModel, settings: RunSettings) -> EndpointWatch:
    """The watch on the model's endpoint(s): ``RunOptions.stop_after_no_reply`` calls in a row with no reply
    (default ``max(8, concurrency)``) stop the run (``_outage``)."""
    urls = [u for u in (safe_base_url(e) for e in (settings.model.base_url, *settings.model.endpoints)) if u]
    where = f"{', '.join(urls)} ({model.name})" if urls else f"of {model.name} (the provider's default URL)"
    threshold = settings.run.stop_after_no_reply
    return EndpointWatch(where, max(MIN_THRESHOLD, settings.run.concurrency) if threshold is None else threshold)


def _wrap(model: ChatModel, settings: RunSettings, watch: EndpointWatch | None = None) -> ChatModel:
    limiter = ProviderLimiter(max_concurrent=max(1, settings.run.concurrency), requests_per_s=settings.model.requests_per_s)
    wrapped: ChatModel = ResilientModel(model, limiter, settings.model.retry, watch)
    if settings.model.cache_dir is not None:
        wrapped = CachedModel(wrapped, ResponseCache(settings.model.cache_dir))
    return wrapped


async def run_benchmark(
    questions: Sequence[Question],
    store: Path | str,
    mode: RunMode,
    model: str | ChatModel,
    out: Path | str,
    *,
    benchmark: str | None = None,
    settings: RunSettings | None = None,
    limit: int | None = None,
    tasks: Sequence[str] | None = None,
    invalid: Sequence[InvalidRow] = (),
    notes: Mapping[str, Sequence[str]] | None = None,
) -> RunSummary:
    """Run ``questions`` in ``mode`` with ``model`` and write results under ``out``.

    Layout: ``out/<benchmark>/<mode>/<model-slug>/{results.jsonl, run_manifest.json}``; with
    ``settings.run.layout = "reference"``, the reference's ``out/<ehr_bench|mm_bench|agent_ehr_bench>/
    <agentic|oneshot>/<split>/<snake model>/`` with rows in its shape (``clinseek.refformat``). A rerun
    with the same configuration resumes: rows already done (any status but ``infra_error``) are
    kept, infra errors and rows lost to a kill are redone, nothing is duplicated. A row is reused
    only for the same question (:func:`question_hash`) on the same store (:func:`store_identity`):
    a row of one of these qids that answered another question (another benchmark build under the
    same positional qids) or ran on another store is moved to ``superseded.jsonl`` and redone.
    The summary counts only this call's (question, run) pairs.

    Args:
        questions: benchmark questions (``clinseek.bench.load_questions``).
        store: the DuckDB store the episodes are built from, or a ``postgresql://`` URL of a mimic-code
            database (:func:`~clinseek.episode.open_store_reader`).
        mode: ``agent`` (ClinSeekAgent loop), ``curated`` (one-shot Curated Input) or ``both``.
        model: ``provider:model`` (built with ``get_model``; ``settings.model.base_url`` applies) or a
            ``ChatModel`` instance.
        out: the results root.
        benchmark: directory name of the benchmark (default: each question's ``benchmark`` field, so
            text and multimodal questions of one benchmark directory go to separate folders).
        settings: concurrency, runs per question, budgets, limits, retries, cache, progress.
        limit: run at most ``limit`` questions (after the ``tasks`` filter), a stratified subset: the
            first ``limit`` of a round-robin over tasks and task types (``bench.stratified_order``).
        tasks: run only questions of these tasks (each must be a task of ``questions``).
        invalid: manifest rows that cannot run (:func:`clinseek.bench.prepare_run`): each is
            recorded as an ``invalid_input`` row with its reason (per run index, again on every
            rerun, never counted against ``limit``), scored as a missing question; ``tasks`` filters
            them by their ``task`` too.
        notes: per qid, what an explicit flag let the question run with (its rows' ``input_warnings``).

    Raises:
        ClinseekError: no questions to run and no invalid row to record, a missing store file, a store holding none of the
            questions' patients (one that lacks only some logs a warning), a results directory of another
            configuration, or one another run is writing; browser tools named without a knowledge
            source, or a knowledge source that cannot be opened (unknown backend, missing key).
        ModelError: an unknown provider or a missing API key; with ``settings.model.preflight``, an endpoint
            that cannot serve the run (unreachable, unknown model, tool calls refused).
        EndpointGone: the model endpoint stopped answering mid-run (``RunOptions.stop_after_no_reply`` calls in
            a row with no reply; the local executor): the rows written are kept, a rerun resumes the rest.
    """
    settings = settings or RunSettings()
    chosen = _select(questions, invalid, tasks, limit)
    bad = [r for r in invalid if not tasks or r.task in set(tasks)]
    if not chosen and not bad:
        raise ClinseekError("no questions to run (check --tasks / --limit)")
    if chosen:
        _check_store(_store_source(store), chosen, mode)
    groups: dict[str, _Group] = {}
    for q in chosen:  # one results directory per benchmark (text and multimodal rows never mix)
        groups.setdefault(benchmark or q.benchmark, _Group(notes=notes or {})).questions.append(q)
    for r in bad:
        groups.setdefault(benchmark or r.benchmark, _Group(notes=notes or {})).invalid.append(r)
    for q in questions:  # the whole manifest: rows of other builds are told apart from rows not selected this time
        if (benchmark or q.benchmark) in groups:
            groups[benchmark or q.benchmark].manifest[q.qid] = q
    for r in invalid:
        if (benchmark or r.benchmark) in groups:
            groups[benchmark or r.benchmark].manifest.setdefault(r.qid, None)
    owned = isinstance(model, str)
    if settings.model.endpoints and not owned:
        raise ClinseekError("ModelSettings.endpoints (--base-url repeated) needs the model as 'provider:model': each "
                            "replica's client is built from the name")
    base = _model(model, settings) if isinstance(model, str) else model
    watch = _watch(base, settings)
    wrapped = _wrap(base, settings, watch)
    modes: list[Literal["agent", "curated"]] = ["agent", "curated"] if mode == "both" else [mode]
    try:
        totals = Counter(benchmark or q.benchmark for q in questions)
        summary = await _run_modes(groups, _store_source(store), modes, wrapped, Path(out), settings, dict(totals),
                                   source=model if isinstance(model, str) else base, watch=watch)
        return summary.model_copy(update={"invalid_reasons": [r.reason for r in bad]})
    finally:
        if owned:
            await base.aclose()


async def _run_modes(groups: dict[str, _Group], store: Path | str,
                     modes: list[Literal["agent", "curated"]], model: ChatModel, out: Path,
                     settings: RunSettings, totals: dict[str, int] | None = None,
                     source: str | ChatModel | None = None, watch: EndpointWatch | None = None) -> RunSummary:
    """Run every (benchmark, mode); ``source`` (the model's name, or the unwrapped model) is what Ray
    workers build their own model from; ``watch`` stops the local engine when the endpoint is gone."""
    checked, counter = await _preflight(model, settings, "agent" in modes)
    shared = replace(await _open_shared(settings, "agent" in modes), store_id=store_identity(store),
                     totals=totals or {}, preflight=checked, counter=counter, watch=watch)
    try:
        if settings.run.executor == "ray":
            from ._ray import RayExecutor

            shared = replace(shared, ray=await RayExecutor.start(source or model, settings, store, shared.store_id))
        pairs = [(name, m) for name in groups for m in modes]
        runs: list[ModeSummary] = []
        for i, (name, m) in enumerate(pairs):
            try:
                runs.append(await _run_mode(groups[name], store, m, model, out, name, settings, shared))
            except EndpointGone as gone:  # the same command's other (benchmark, mode) pairs are not started
                raise gone.also_not_started(tuple(f"{n} {later}" for n, later in pairs[i + 1:])) from None
    finally:
        if shared.ray is not None:
            await shared.ray.close()
        if shared.knowledge is not None and not isinstance(settings.sources.knowledge, Knowledge):
            close_knowledge(shared.knowledge)
    return RunSummary(runs=runs)


async def _preflight(model: ChatModel, settings: RunSettings, agent: bool) -> tuple[PreflightReport | None, TokenCounter]:
    """The pre-flight (when ``settings.model.preflight``) and the token counter the budgets use."""
    report: PreflightReport | None = None
    counter: TokenCounter = ESTIMATE
    if settings.model.preflight:
        tools = agent and model.supports_native_tools
        report, counter = await preflight(model, tools=tools, timeout_s=settings.model.generate.timeout_s)
        if report is not None and report.server_context_window is not None and \
                report.server_context_window < settings.budget.context_window_tokens:
            logger.warning("%s serves a context of %d tokens, smaller than the run's context window %d; set "
                           "--context-window %d", report.endpoint, report.server_context_window,
                           settings.budget.context_window_tokens, report.server_context_window)
    return report, settings.model.token_counter or counter


async def _open_shared(settings: RunSettings, agent: bool) -> _Shared:
    """Open the knowledge source once for the whole call when agent runs offer the browser tools."""
    source = settings.sources.knowledge
    if not agent or not wants_browser(settings) or source is None:
        return _Shared()
    knowledge, _ = await open_run_knowledge(source)
    return _Shared(knowledge, knowledge_record(knowledge, source))


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")



