"""The inspect_ai tasks ``clinseek/clinseek_text`` and ``clinseek/clinseek_mm``.

``inspect eval clinseek/clinseek_text -T bench=BENCH -T store=STORE -T mode=agent --model ...`` runs the
text questions of a clinseek benchmark (EHR-Bench subtasks, AgentEHR-Bench), ``clinseek/clinseek_mm``
its multimodal ones; ``-T demo=true`` uses a synthetic store and a benchmark built from it (cached).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import anyio
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from .._version import __version__
from ..agent import PROMPT_VERSION, AgentBudget, offered_tools
from ..bench import Question, prepare_run
from ..errors import ClinseekError
from ..runner import question_row_fields, store_identity
from ..store import is_postgres_url, redact_url
from ..tools import Limits
from ._scorer import clinseek_scorer
from ._solvers import clinseek_agent, clinseek_curated

logger = logging.getLogger(__name__)

Kind = Literal["text", "mm"]
METADATA_KEY = "clinseek"
"""The key of the task's metadata (``EvalSpec.metadata`` in the log) that describes the clinseek run."""


@task
def clinseek_text(bench: str | None = None, store: str | None = None, mode: str = "agent", demo: bool = False,
                  tasks: str | Sequence[str] | None = None, max_turns: int | None = None,
                  max_tool_chars: int | None = None, vision: bool = True, cxr_root: str | None = None,
                  cache: str | None = None) -> Task:
    """ClinSeek-Bench text questions (risk prediction and decision making): one sample per question.

    Args:
        bench: a clinseek benchmark (folder or manifest file; ``clinseek bench build``).
        store: the clinseek store it was built from.
        mode: ``agent`` (the model calls clinseek's EHR tools on the sealed episode until ``ehr.finish``)
            or ``curated`` (one call on the Curated Input).
        demo: use a synthetic store and a benchmark built from it (cached under ``cache``); ignores
            ``bench`` and ``store``.
        tasks: only these tasks (names, a list or comma-separated).
        max_turns: model calls per question at most (agent mode).
        max_tool_chars: a tool output is cut here, announced (agent mode).
        vision: images are shown to the model (multimodal questions; else a note says how many).
        cxr_root: the CXR image folder (default: the store's own, when it has one).
        cache: where ``demo`` keeps its store and benchmark (default ``$CLINSEEK_CACHE_DIR/inspect-demo``,
            else ``~/.cache/clinseek/inspect-demo``).
    """
    return clinseek_task("text", bench, store, mode, demo=demo, tasks=tasks, max_turns=max_turns,
                         max_tool_chars=max_tool_chars, vision=vision, cxr_root=cxr_root, cache=cache)


@task
def clinseek_mm(bench: str | None = None, store: str | None = None, mode: str = "agent", demo: bool = False,
                tasks: str | Sequence[str] | None = None, max_turns: int | None = None,
                max_tool_chars: int | None = None, vision: bool = True, cxr_root: str | None = None,
                cache: str | None = None) -> Task:
    """ClinSeek-Bench multimodal questions (linked CXR studies): one sample per question.

    The arguments are :func:`clinseek_text`'s. With a CXR folder (``cxr_root``, default the store's own)
    the linked images go with the task turn and the ``image.*`` tools are offered in agent mode.
    """
    return clinseek_task("mm", bench, store, mode, demo=demo, tasks=tasks, max_turns=max_turns,
                         max_tool_chars=max_tool_chars, vision=vision, cxr_root=cxr_root, cache=cache)


def clinseek_task(kind: Kind, bench: str | Path | None, store: str | Path | None, mode: str, *, demo: bool = False,
                  tasks: str | Sequence[str] | None = None, max_turns: int | None = None,
                  max_tool_chars: int | None = None, vision: bool = True, cxr_root: str | Path | None = None,
                  cache: str | Path | None = None) -> Task:
    """The task of ``kind`` (what :func:`clinseek_text` and :func:`clinseek_mm` return).

    Raises:
        ClinseekError: no ``bench``/``store`` (and no ``demo``), an unknown ``mode``, no question of this
            kind (or of ``tasks``) in the benchmark; and what ``clinseek.bench.prepare_run`` raises.
    """
    if mode not in ("agent", "curated"):
        raise ClinseekError(f"-T mode={mode}: expected 'agent' or 'curated'")
    if demo:
        store, bench = _demo_inputs(cache)
    if bench is None or store is None:
        raise ClinseekError(f"clinseek_{kind} needs -T bench=BENCH and -T store=STORE (or -T demo=true)")
    if is_postgres_url(store):  # inspect keeps task arguments and errors in its log: never echo the password
        raise ClinseekError(
            f"-T store={redact_url(str(store))}: the inspect tasks read a store file, not a PostgreSQL database; "
            "copy it once with `clinseek data ingest --postgres URL --out store.duckdb` and give -T "
            "store=store.duckdb (`clinseek run --store URL` reads the database live)")
    bench, store = Path(bench).resolve(), Path(store).resolve()
    questions = _questions(kind, bench, store, _names(tasks))
    cxr = Path(cxr_root).resolve() if cxr_root else _store_cxr_root(store)
    if mode == "agent":
        solver = clinseek_agent(str(bench), str(store), max_turns=max_turns, max_tool_chars=max_tool_chars,
                                vision=vision, cxr_root=str(cxr) if cxr else None)
    else:
        solver = clinseek_curated(str(bench), str(store), vision=vision, cxr_root=str(cxr) if cxr else None)
    budget = AgentBudget(**{k: v for k, v in {"max_turns": max_turns, "max_tool_chars": max_tool_chars}.items()
                            if v is not None})
    return Task(dataset=MemoryDataset([question_sample(q) for q in questions], name=f"clinseek_{kind}"),
                solver=solver, scorer=clinseek_scorer(mode=mode),  # type: ignore[arg-type]
                metadata={METADATA_KEY: _run_info(mode, bench, store, questions, budget, vision, cxr)})


def question_sample(question: Question) -> Sample:
    """One benchmark question as an inspect sample: ``id`` the qid, ``target`` the gold label items, and
    ``metadata`` the result-row fields of the question (``subject_id``, ``prediction_time``, ``task``,
    ``category``, ``task_type``, ``benchmark``, ``candidates``...). The model sees none of these: the
    solver builds its turns from the sealed episode. ``input`` only names the question."""
    fields = question_row_fields(question)
    fields.pop("gold")
    text = (f"clinseek question {question.qid} ({question.task}): subject_id {question.subject_id} at "
            f"{question.prediction_time:%Y-%m-%d %H:%M:%S}; the solver opens its sealed episode")
    return Sample(id=question.qid, input=text, target=list(question.label),
                  metadata={"benchmark": question.benchmark, **fields})


def _names(tasks: str | Sequence[str] | None) -> set[str]:
    if tasks is None:
        return set()
    items = tasks.split(",") if isinstance(tasks, str) else [str(t) for t in tasks]
    return {t.strip() for t in items if t.strip()}


def _questions(kind: Kind, bench: Path, store: Path, tasks: set[str]) -> list[Question]:
    run = prepare_run(bench, store)
    for row in run.invalid:
        logger.warning("clinseek: question %s is not run: %s", row.qid, row.reason)
    found = [q for q in run.questions if (q.task_type == "multimodal") == (kind == "mm")]
    unknown = tasks - {q.task for q in found}
    if unknown:
        raise ClinseekError(f"{bench}: no {kind} question of task {sorted(unknown)}; "
                            f"its tasks: {sorted({q.task for q in found})}")
    found = [q for q in found if not tasks or q.task in tasks]
    if not found:
        raise ClinseekError(f"{bench}: no {kind} question to run")
    return found


def _run_info(mode: str, bench: Path, store: Path, questions: list[Question], budget: AgentBudget, vision: bool,
              cxr_root: Path | None) -> dict[str, Any]:
    """What ``clinseek import-inspect`` writes to the run manifest (the solver records each sample's tools)."""
    limits = Limits()
    return {
        "mode": mode, "bench": str(bench), "store": str(store), "store_id": store_identity(store),
        "prompt_version": PROMPT_VERSION, "code_version": __version__,
        "policy_versions": sorted({q.policy for q in questions}),
        "tools": list(offered_tools(limits, imaging=cxr_root is not None)) if mode == "agent" else [],
        "budget": budget.as_dict(), "limits": limits.as_dict(), "vision": vision,
        "cxr_root": str(cxr_root) if cxr_root else None,
    }


def _store_cxr_root(store: Path) -> Path | None:
    from ..imaging import store_cxr_root

    return store_cxr_root(store)


def demo_folder(cache: str | Path | None = None) -> Path:
    """Where ``-T demo=true`` keeps its synthetic store and benchmark (one folder per clinseek version)."""
    root = Path(cache) if cache else Path(os.environ.get("CLINSEEK_CACHE_DIR") or Path.home() / ".cache" / "clinseek")
    if not cache:
        root = root / "inspect-demo"
    return root / f"clinseek-{__version__}"


def _demo_inputs(cache: str | Path | None = None) -> tuple[Path, Path]:
    """The demo's synthetic store and benchmark (``clinseek demo``'s first two stages, default sizes),
    made once in :func:`demo_folder` and reused."""
    from ..demo import demo_inputs as make

    folder = demo_folder(cache)
    if (folder / "store.duckdb").is_file() and (folder / "bench" / "build_manifest.json").is_file():
        return folder / "store.duckdb", folder / "bench"
    logger.warning("clinseek: building the demo store and benchmark in %s (once)", folder)
    with ThreadPoolExecutor(1) as pool:  # its own event loop: inspect may create tasks inside a running one
        return pool.submit(anyio.run, lambda: make(folder)).result()
