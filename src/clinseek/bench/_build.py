"""``build_benchmark``: draw questions from any store and write a release-shaped benchmark directory.

Output (written to a temporary sibling directory and renamed into place, so a failed build leaves
nothing half-written):

- ``ClinSeek-Bench_text.json``: text rows in the released schema (one JSON array);
- ``ClinSeek-Bench_multimodal.jsonl``: multimodal rows, when the store has CXR tables;
- ``candidates/<task>.json``: each decision task's full candidate vocabulary;
- ``AgentEHR-Bench.jsonl`` instead of the above with ``benchmark="agentehr"`` (the six AgentEHR-Bench tasks);
- ``build_manifest.json``: store provenance, seed, tasks, counts and skipped tasks with reasons.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import duckdb
from pydantic import BaseModel, ConfigDict, Field

from .._atomic import staging_dir
from .._suggest import did_you_mean
from .._version import __version__
from ..errors import ClinseekError, RegistryError
from ..policy import MM_POLICY, TEXT_POLICY
from ..store import open_store
from ._anchor import Anchor, BuildContext, Drawn
from ._future import FutureReader
from ._load import AGENTEHR_FILE, MM_FILE, TEXT_FILE
from ._mm_build import build_mm_rows
from ._spec import TaskSpec
from ._tasks import BUILD_SETS, TASKS, get_category

MAX_INLINE_CANDIDATES = 2000
"""Decision tasks with a larger vocabulary leave ``candidates`` empty in the row; the full list is in
``candidates/<task>.json`` (and the agent finds answers with the candidate tools)."""


class BuildManifest(BaseModel):
    """``build_manifest.json``: how a built benchmark was made (frozen, strict)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    clinseek_version: str
    created_at: str
    """UTC, ISO 8601."""
    store: str
    """Path of the store the questions were drawn from."""
    store_info: dict[str, str]
    """The store's provenance (``clinseek_meta.store_info``: kind, sources, seed, ...)."""
    seed: int
    per_task: int
    tasks: list[str]
    """Tasks requested, in build order."""
    policies: dict[str, str]
    """Policy version per split (text, multimodal)."""
    counts: dict[str, int]
    """Questions written per task."""
    skipped: dict[str, str]
    """Tasks with no question, and why."""
    excluded: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Per task, encounters it never draws by design, counted over the whole store by reason
    (``procedures_ccs``: admissions whose procedures are coded in ICD-9-CM, which has no offline CCS map)."""
    benchmark: Literal["clinseek", "agentehr"] = "clinseek"
    """Which task set was built: ClinSeek-Bench (text and multimodal) or AgentEHR-Bench."""


@dataclass(frozen=True, slots=True)
class BuildResult:
    """What :func:`build_benchmark` wrote."""

    out: Path
    counts: dict[str, int]
    skipped: dict[str, str]
    manifest: BuildManifest


BenchmarkKind = Literal["clinseek", "agentehr"]
"""What ``build_benchmark`` draws: ClinSeek-Bench (45 text tasks, 6 multimodal categories) or AgentEHR-Bench."""


def _buildable(benchmark: BenchmarkKind) -> list[TaskSpec]:
    """The tasks one build of ``benchmark`` may draw, in build order."""
    return [t for b in BUILD_SETS[benchmark] for t in TASKS.tasks(b)]


def requested_tasks(tasks: Sequence[str] | None, benchmark: BenchmarkKind = "clinseek") -> list[str]:
    """The task names a build asks for (every task of ``benchmark`` when ``tasks`` is empty).

    Raises:
        RegistryError: an unknown task name (checked before anything is written).
    """
    known = [t.name for t in _buildable(benchmark)]
    if not tasks:
        return known
    unknown = [f"{t!r}{did_you_mean(t, known)}" for t in tasks if t not in known]
    if unknown:
        which = "AgentEHR-Bench task(s)" if benchmark == "agentehr" else "task(s)"
        raise RegistryError(f"unknown {which} {', '.join(unknown)}; `clinseek tasks` lists them")
    return list(dict.fromkeys(tasks))


def build_benchmark(
    store: Path | str,
    *,
    tasks: Sequence[str] | None = None,
    per_task: int = 40,
    seed: int = 42,
    out: Path | str,
    pool: int | None = None,
    benchmark: BenchmarkKind = "clinseek",
) -> BuildResult:
    """Draw questions per task from a store and write a release-shaped benchmark directory.

    Anchors (patient, cutoff, encounter) are sampled from the store with a RNG seeded by
    ``seed`` and the task name; every label comes from the rows ``Policy.future_select`` returns
    for the question's episode key (see :mod:`clinseek.bench._future`). Risk tasks take up to
    half of their rows from each answer so that neither is constant where the data allows.

    Args:
        store: a clinseek store (synthetic, the MIMIC-IV demo, or full MIMIC-IV).
        tasks: EHR-Bench subtask names and/or multimodal category slugs (AgentEHR-Bench task names with
            ``benchmark="agentehr"``); default: all.
        per_task: questions per task (fewer when the store cannot supply them; the AgentEHR-Bench
            release has 100).
        seed: sampling seed.
        out: output directory; must not exist or be empty.
        pool: anchors examined per task at most (default ``max(20 * per_task, 400)``).
        benchmark: ``clinseek`` writes ClinSeek-Bench files; ``agentehr`` writes ``AgentEHR-Bench.jsonl``
            (rows without candidates: the runner gives each episode its task's candidate table).

    Raises:
        RegistryError: an unknown task name.
        ClinseekError: ``out`` exists and is not empty; the store cannot be opened.
    """
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise ClinseekError(f"{out}: output directory exists and is not empty; choose another --out (a new or empty folder)")
    names = requested_tasks(tasks, benchmark)
    specs = {t.name: t for t in _buildable(benchmark)}
    handle = open_store(store)
    present = frozenset(handle.row_counts)
    con = handle.connect()
    text_rows: list[dict[str, Any]] = []
    mm_rows: list[dict[str, Any]] = []
    agentehr_rows: list[dict[str, Any]] = []
    vocab: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    skipped: dict[str, str] = {}
    excluded: dict[str, dict[str, int]] = {}
    try:
        for name in names:
            ctx = BuildContext(
                con,
                FutureReader(con, present),
                present,
                random.Random(f"{seed}:{name}"),
                per_task,
                pool or max(20 * per_task, 400),
            )
            spec = specs[name]
            try:
                if spec.benchmark == "agentehr-bench":
                    rows, reason = _build_agentehr_task(ctx, spec, len(agentehr_rows))
                    agentehr_rows += rows
                elif spec.benchmark == "clinseek-bench-mm":
                    rows, reason = build_mm_rows(ctx, spec, get_category(spec.category).title)
                    mm_rows += rows
                else:
                    rows, reason, cands = _build_text_task(ctx, spec, len(text_rows))
                    text_rows += rows
                    if cands is not None:
                        vocab[name] = cands
                if spec.exclusions is not None and ctx.has(*spec.tables):
                    excluded[name] = spec.exclusions(ctx)
                    reason = _with_exclusions(reason, excluded[name], len(rows), per_task)
            except (ClinseekError, duckdb.Error) as err:  # one task's failure does not stop the build
                rows, reason = [], f"failed: {type(err).__name__}: {err}"
            counts[name] = len(rows)
            if reason:
                skipped[name] = reason
    finally:
        con.close()
    manifest = BuildManifest(
        clinseek_version=__version__,
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        store=str(Path(store)),
        store_info=handle.info,
        seed=seed,
        per_task=per_task,
        tasks=names,
        policies={"text": TEXT_POLICY, "multimodal": MM_POLICY},
        counts=counts,
        skipped=skipped,
        excluded=excluded,
        benchmark=benchmark,
    )
    _write(out, text_rows, mm_rows, vocab, manifest, agentehr_rows if benchmark == "agentehr" else None)
    return BuildResult(out, counts, skipped, manifest)


def _build_agentehr_task(ctx: BuildContext, spec: TaskSpec, offset: int) -> tuple[list[dict[str, Any]], str | None]:
    """Rows of one AgentEHR-Bench task and the reason it yielded fewer than asked (or none)."""
    missing = [t for t in spec.tables if t not in ctx.present]
    if missing or spec.build is None:
        return [], f"the store has no {', '.join(missing)}" if missing else spec.not_built
    drawn = _first_nonempty(spec.build(ctx), ctx.per_task)
    rows = [_agentehr_row(spec, d.anchor, d.label, offset + i) for i, d in enumerate(drawn)]
    reason = None if len(rows) >= ctx.per_task else f"the store supports only {len(rows)} of {ctx.per_task} questions"
    return rows, reason


def _build_text_task(
    ctx: BuildContext, spec: TaskSpec, offset: int
) -> tuple[list[dict[str, Any]], str | None, list[str] | None]:
    """Rows of one text task, the reason it yielded fewer than asked (or none), and its vocabulary."""
    answers: set[str] = set()
    if spec.build is None:
        return [], spec.not_built, None
    missing = [t for t in spec.tables if t not in ctx.present]
    if missing:
        return [], f"the store has no {', '.join(missing)}", None
    if spec.task_type == "risk_prediction":
        drawn, answers = _balanced(spec.build(ctx), ctx.per_task, ctx.rng)
        cands: list[str] | None = None
    else:
        drawn = _first_nonempty(spec.build(ctx), ctx.per_task)
        cands = _candidates(ctx, spec, drawn)
    rows = [_text_row(spec, d, offset + i, cands) for i, d in enumerate(drawn)]
    reason = None
    if len(rows) < ctx.per_task:
        reason = f"the store supports only {len(rows)} of {ctx.per_task} questions"
    if spec.task_type == "risk_prediction" and len(answers) == 1:
        reason = (reason + "; " if reason else "") + f"every label is {next(iter(answers))!r} in this store"
    return rows, reason, cands


def _with_exclusions(reason: str | None, excluded: dict[str, int], written: int, per_task: int) -> str | None:
    """Add to a short task's reason how many encounters the task leaves out by design (manifest ``excluded``)."""
    left_out = {k: n for k, n in excluded.items() if n}
    if written >= per_task or not left_out:
        return reason
    note = "not drawn by design: " + ", ".join(f"{n} {k}" for k, n in left_out.items())
    return f"{reason}; {note}" if reason else note


def _balanced(
    labelled: Iterable[tuple[Anchor, bool | None]], n: int, rng: random.Random
) -> tuple[list[Drawn], set[str]]:
    """Up to ``n`` anchors, half of each answer where the pool allows (the rest from the other side).

    An odd ``n`` gives its extra question to "yes" or "no" by a draw of ``rng`` (``n = 1`` is
    not always "no"). Also returns the answers the examined pool held at all.
    """
    yes: list[Drawn] = []
    no: list[Drawn] = []
    for anchor, label in labelled:
        if label is None:
            continue
        (yes if label else no).append(Drawn(anchor, ("yes",) if label else ("no",)))
        if len(yes) >= n and len(no) >= n:
            break
    half = n // 2 + (1 if n % 2 and rng.random() < 0.5 else 0)
    take_yes = min(len(yes), max(half, n - len(no)))
    take_no = min(len(no), n - take_yes)
    chosen = yes[:take_yes] + no[:take_no]
    rng.shuffle(chosen)
    return chosen, {a for a, pool in (("yes", yes), ("no", no)) if pool}


def _first_nonempty(labelled: Iterable[tuple[Anchor, tuple[str, ...]]], n: int) -> list[Drawn]:
    out: list[Drawn] = []
    seen: set[tuple[int, dt.datetime]] = set()
    for anchor, label in labelled:
        key = (anchor.subject_id, anchor.prediction_time)
        if label and key not in seen:
            seen.add(key)
            out.append(Drawn(anchor, label))
            if len(out) >= n:
                break
    return out


def _candidates(ctx: BuildContext, spec: TaskSpec, drawn: list[Drawn]) -> list[str]:
    """The task's candidate vocabulary (its candidates rule, plus every gold label written)."""
    base = set(spec.vocabulary(ctx)) if spec.vocabulary is not None else set()
    for d in drawn:
        base.update(d.label)
    return sorted(base)


def _fmt(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S")


def _text_row(spec: TaskSpec, drawn: Drawn, idx: int, cands: list[str] | None) -> dict[str, Any]:
    """A row in the released ClinSeek-Bench-Text schema (``source_file = "clinseek-build"``)."""
    a = drawn.anchor
    risk = spec.task_type == "risk_prediction"
    label: str | list[str] = drawn.label[0] if risk else list(drawn.label)
    inline = (
        ["yes", "no"]
        if risk
        else (cands if cands is not None and len(cands) <= MAX_INLINE_CANDIDATES else [])
    )
    return {
        "qid": f"clinseek_{spec.task_type}_{idx}",
        "subject_id": a.subject_id,
        "hadm_id": a.hadm_id,
        "prediction_time": _fmt(a.prediction_time),
        "latest_event_time": None,
        "task": spec.name,
        "task_type": spec.task_type,
        "category": get_category(spec.category).title,
        "instruction": spec.instruction,
        "candidates": inline,
        "label": label,
        "output": label if isinstance(label, str) else "\n".join(label),
        "task_info": {
            "task": spec.name,
            "task_type": spec.task_type,
            "target": json.dumps(list(drawn.label)),
            "label": label,
            "source_idx": idx,
            "source_file": "clinseek-build",
            "prediction_time": _fmt(a.prediction_time),
        },
        "source_file": "clinseek-build",
        "source_idx": idx,
        "target_hadm_id": a.target_hadm_id,
        "target_stay_id": a.target_stay_id,
    }


def _agentehr_row(spec: TaskSpec, anchor: Anchor, label: tuple[str, ...], index: int) -> dict[str, Any]:
    """A row in AgentEHR-Bench's schema (``label`` as ``[{"name": ...}]``) plus clinseek's provenance fields.

    ``target_hadm_id`` (a clinseek field) names the admission whose codes the episode hides; the cutoff is
    ``prediction_time`` (AgentEHR's own rows use the same name).
    """
    return {
        "qid": f"agentehr_{spec.name}_{index}",
        "subject_id": anchor.subject_id,
        "hadm_id": anchor.hadm_id,
        "prediction_time": _fmt(anchor.prediction_time),
        "task": spec.name,
        "category": get_category(spec.category).title,
        "label": [{"name": name} for name in label],
        "target_hadm_id": anchor.target_hadm_id,
        "source_file": "clinseek-build",
        "source_idx": index,
    }


def _write(
    out: Path,
    text_rows: list[dict[str, Any]],
    mm_rows: list[dict[str, Any]],
    vocab: dict[str, list[str]],
    manifest: BuildManifest,
    agentehr_rows: list[dict[str, Any]] | None = None,
) -> None:
    """Write everything into a temporary sibling directory, then move it to ``out``."""
    tmp = staging_dir(out)
    try:
        if agentehr_rows is not None:
            lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in agentehr_rows)
            (tmp / AGENTEHR_FILE).write_text(lines, encoding="utf-8")
        elif text_rows or not mm_rows:
            (tmp / TEXT_FILE).write_text(
                json.dumps(text_rows, ensure_ascii=False, indent=1), encoding="utf-8"
            )
        if mm_rows:
            lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in mm_rows)
            (tmp / MM_FILE).write_text(lines, encoding="utf-8")
        if vocab:
            (tmp / "candidates").mkdir()
            for task, words in vocab.items():
                (tmp / "candidates" / f"{task}.json").write_text(
                    json.dumps(words, ensure_ascii=False), encoding="utf-8"
                )
        (tmp / "build_manifest.json").write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
        if out.exists():
            out.rmdir()
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
