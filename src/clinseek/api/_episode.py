"""``clinseek.open_episode`` / ``open_question_episode`` and their async twins: one sealed episode with its tools.

What an MCP server, inspect_ai tools and Ray workers hold: the caller opens a session, lists its tools, calls
them by name with JSON arguments (the reply carries the text the agent loop shows and the structured
result), and closes it. The patient and the cutoff are fixed when the session opens, never tool arguments.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .._sync import sync_twin
from ..errors import ClinseekError
from ..policy import TEXT_POLICY

if TYPE_CHECKING:
    from ..agent import AgentBudget, EpisodeSession, Sources
    from ..bench import Question
    from ..episode import StoreReader
    from ..knowledge import Knowledge
    from ..tools import Limits

async def open_episode_async(
    store: StoreReader | Path | str,
    subject_id: int,
    prediction_time: datetime | str,
    *,
    policy: str = TEXT_POLICY,
    target_hadm_id: int | None = None,
    target_stay_id: int | None = None,
    study_ids: Sequence[int] = (),
    dicom_ids: Sequence[str] = (),
    hide_cxr_reports: bool = False,
    candidates: Mapping[str, Sequence[str]] | None = None,
    tools: Sequence[str] | None = None,
    budget: AgentBudget | None = None,
    limits: Limits | None = None,
    sources: Sources | None = None,
    vision: bool = True,
) -> EpisodeSession:
    """Open the sealed episode of one patient at one cutoff, with the tools an agent is offered on it.

    Args:
        store: the store file (the session opens a reader of it and closes it with itself), or an open
            :class:`~clinseek.episode.StoreReader` (:func:`clinseek.episode.open_store_reader`) shared by many
            sessions: the caller closes it after them.
        subject_id: the patient (``hosp.patients.subject_id``).
        prediction_time: the cutoff, naive on MIMIC's shifted clock (a ``datetime`` or ``"YYYY-MM-DD HH:MM:SS"``).
        policy: the policy version (``clinseek-text-v1``, or ``multimodal-strict-temporal-scope-v1`` for linked
            CXR studies).
        target_hadm_id: the admission whose codes are hidden whatever the cutoff.
        target_stay_id: the ED stay whose diagnoses are hidden whatever the cutoff.
        study_ids: CXR studies linked to the episode (the only ones that exist under the multimodal policy).
        dicom_ids: CXR images linked to the episode (likewise).
        hide_cxr_reports: hide the linked studies' report text.
        candidates: candidate lists by task name (``{"diagnoses_ccs": [...]}`` becomes the table
            ``candidates.diagnoses_ccs_candidates``).
        tools: the tools offered (default: every ``ehr.*`` tool, the ``browser.*`` tools with a knowledge
            source, the ``image.*`` tools with a ``cxr_root``).
        budget: its ``max_tool_chars`` cuts the text shown, as in the agent loop.
        limits: caps and timeouts of every tool call.
        sources: the knowledge source (opened here, closed with the session), CXR root and imaging models.
        vision: the caller is shown pictures; else a tool's pictures are a note in the text.

    Returns:
        An open :class:`~clinseek.agent.EpisodeSession`; close it (``with`` / ``async with``).

    Raises:
        ClinseekError: a ``prediction_time`` that does not parse, a knowledge source that cannot be opened.
        PolicyError: an invalid key or unknown policy version.
        EpisodeError: the subject is not in the store; StoreError: not a clinseek store.
        RegistryError: an unknown tool name; ImagingError: a linked image without a file under ``cxr_root``.
    """
    from .._threads import run_cpu_bound
    from ..agent import Sources, open_session
    from ..episode import EpisodeKey

    key = EpisodeKey(subject_id, _parse_time(prediction_time), policy, target_hadm_id, target_stay_id,
                     tuple(study_ids), tuple(dicom_ids), hide_cxr_reports)
    sources = sources or Sources()
    knowledge, close = await _open_knowledge(sources)
    try:
        opened = replace(sources, knowledge=knowledge)
        session = await run_cpu_bound(lambda: open_session(
            store, key, candidates={k: list(v) for k, v in (candidates or {}).items()}, tools=tools, limits=limits,
            budget=budget, sources=opened, vision=vision))
    except BaseException:
        close()
        raise
    session.call_on_close(close)
    return session


async def open_question_episode_async(
    bench: Path | str | Sequence[Question],
    qid: str,
    store: StoreReader | Path | str,
    *,
    tools: Sequence[str] | None = None,
    budget: AgentBudget | None = None,
    limits: Limits | None = None,
    sources: Sources | None = None,
    vision: bool = True,
) -> EpisodeSession:
    """Open the episode an agent run of benchmark question ``qid`` gets, without its label.

    The session holds what the runner gives the agent: the question's sealed episode (patient, cutoff,
    policy, hidden encounters, linked CXR studies), its candidate tables, the tools, the system and task
    turns (``messages``) and the linked images (``images``); never the gold label. Imaging artifacts and
    model-ready image copies go to a temporary folder removed when the session closes.

    Args:
        bench: a manifest file or benchmark directory, or questions already loaded.
        qid: the question id.
        store: the store the benchmark was built from (a file, or an open reader as in :func:`open_episode_async`).
        tools: the tools offered (default: as in an agent run of the question).
        budget: its ``max_tool_chars`` cuts the text shown, as in the agent loop.
        limits: caps and timeouts of every tool call.
        sources: knowledge source, CXR root and imaging models, ``max_images``, AgentEHR candidate tables.
        vision: the caller is shown pictures (the task turn then carries the linked images).

    Raises:
        ClinseekError: no question ``qid`` in ``bench`` (the closest ids are named).
        ManifestError: a manifest row does not validate (and what :func:`open_episode_async` raises).
    """
    from .._threads import run_cpu_bound
    from ..agent import Sources, open_question_session

    sources = sources or Sources()
    # the question is read before a knowledge source is opened for it, else with the episode (one hand-off)
    loaded = await run_cpu_bound(_question, bench, qid) if sources.knowledge is not None else None
    knowledge, close_knowledge = await _open_knowledge(sources)
    work = Path(tempfile.mkdtemp(prefix="clinseek_episode_"))

    def close() -> None:
        close_knowledge()
        shutil.rmtree(work, ignore_errors=True)

    try:
        opened = replace(sources, knowledge=knowledge)
        session = await run_cpu_bound(lambda: open_question_session(
            store, loaded or _question(bench, qid), tools=tools, limits=limits, budget=budget, sources=opened,
            artifact_dir=work / "artifacts", fitted_dir=work / "fitted", vision=vision))
    except BaseException:
        close()
        raise
    session.call_on_close(close)
    return session


open_episode = sync_twin(open_episode_async)


open_question_episode = sync_twin(open_question_episode_async)


def _parse_time(value: datetime | str) -> datetime:
    if isinstance(value, datetime):
        return value
    try:
        return datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ClinseekError(f"prediction_time {value!r}: expected 'YYYY-MM-DD HH:MM:SS'") from None


def _question(bench: Path | str | Sequence[Question], qid: str) -> Question:
    from .._suggest import did_you_mean
    from ..bench import load_questions

    questions = load_questions(bench) if isinstance(bench, str | Path) else bench
    found = [q for q in questions if q.qid == qid]
    if not found:
        where = bench if isinstance(bench, str | Path) else "the questions given"
        raise ClinseekError(f"{where}: no question {qid!r}{did_you_mean(qid, [q.qid for q in questions])}")
    return found[0]


async def _open_knowledge(sources: Sources) -> tuple[Knowledge | None, Callable[[], None]]:
    """The knowledge source of ``sources`` opened (off the loop), and what closes it (nothing for one given open)."""
    from ..runner import close_knowledge, open_run_knowledge

    if sources.knowledge is None:
        return None, lambda: None
    knowledge, owned = await open_run_knowledge(sources.knowledge)
    return knowledge, (lambda: close_knowledge(knowledge)) if owned else (lambda: None)
