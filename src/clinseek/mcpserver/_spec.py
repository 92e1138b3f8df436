"""What one served episode is (store, patient and cutoff or a benchmark question, tools, limits), and opening it.

An :class:`EpisodeSpec` is what ``clinseek mcp serve`` builds from its options (or reads with ``--spec``),
what each bearer token of the HTTP mode stands for, and what the agent loop's ``mcp-stdio`` route hands
its subprocess. :func:`open_spec` opens it through the front door (``clinseek.open_episode_async`` /
``open_question_episode_async``); the label of a benchmark question is never read.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..policy import TEXT_POLICY
from ..tools import Limits
from ._names import NameStyle

if TYPE_CHECKING:
    from ..agent import EpisodeSession

_LIMITS = {f.name for f in dataclasses.fields(Limits)}


class EpisodeSpec(BaseModel):
    """One episode to serve. Give exactly one of: ``subject_id`` and ``prediction_time``; ``bench`` and
    ``qid``; ``question`` (a benchmark question inline, as the agent loop's subprocess route does).

    Times are naive, on MIMIC's shifted clock. Paths are read by the server process.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    store: Annotated[str | Path, Field(union_mode="left_to_right")]
    """The store file the episode is built from, or a mimic-code PostgreSQL database URL
    (``postgresql://user:password@host:port/db``)."""
    subject_id: int | None = None
    """The patient (``hosp.patients.subject_id``)."""
    prediction_time: datetime | None = None
    """The cutoff: only rows recorded before it are visible."""
    policy: str = TEXT_POLICY
    """The policy version (``clinseek-text-v1``; ``multimodal-strict-temporal-scope-v1`` for linked CXR
    studies)."""
    target_hadm_id: int | None = None
    """The admission whose codes are hidden whatever the cutoff."""
    target_stay_id: int | None = None
    """The ED stay whose diagnoses are hidden whatever the cutoff."""
    study_ids: tuple[int, ...] = ()
    """CXR studies linked to the episode (multimodal policy)."""
    dicom_ids: tuple[str, ...] = ()
    """CXR images linked to the episode (multimodal policy)."""
    hide_cxr_reports: bool = False
    """Hide the linked studies' report text."""
    candidates: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    """Candidate lists by task name (``diagnoses_ccs`` becomes ``candidates.diagnoses_ccs_candidates``)."""
    bench: Path | None = None
    """A benchmark manifest file or folder holding question ``qid``."""
    qid: str | None = None
    """The benchmark question whose episode is served (its label is never shown)."""
    question: dict[str, Any] | None = None
    """A benchmark question as JSON (``clinseek.bench.Question``), served like ``bench`` + ``qid``."""
    tools: tuple[str, ...] | None = None
    """The tools offered (default: as ``clinseek.open_episode`` offers them)."""
    limits: dict[str, Any] = Field(default_factory=dict)
    """``clinseek.tools.Limits`` fields that differ from the defaults (``max_rows``, ``sql_timeout_s`` ...)."""
    max_tool_chars: int | None = Field(default=None, ge=1)
    """Where the text shown for a call is cut, as ``AgentBudget.max_tool_chars`` (default: the budget's)."""
    knowledge: Literal["off", "offline"] = "off"
    """``offline``: the ``browser.*`` tools over the offline knowledge index (no web search over MCP)."""
    knowledge_cache: Path | None = None
    """Where the offline index is cached (``None``: built in memory for each episode; the CLI gives
    ``$CLINSEEK_CACHE_DIR/knowledge`` or ``~/.cache/clinseek/knowledge``)."""
    docs: tuple[Path, ...] = ()
    """Folders of documents added to the offline corpus."""
    cxr_root: Path | None = None
    """MIMIC-CXR root the ``image.*`` tools read the linked images from (``None``: no image tools)."""
    imaging_weights: Path | None = None
    """Folder of imaging model weights (docs/imaging.md)."""
    imaging_device: str = "cpu"
    """torch device of the imaging models."""
    candidate_tables: Path | None = None
    """AgentEHR's ``candidate_table.db`` for AgentEHR-Bench questions."""
    tool_names: NameStyle = "dotted"
    """MCP tool names: ``dotted`` (``ehr.run_sql_query``) or ``safe`` (``ehr__run_sql_query``)."""
    pictures: bool = True
    """Send the pictures a tool makes as image blocks (else a note in the text says they were not shown)."""

    @field_validator("store")
    @classmethod
    def _store_path_or_url(cls, value: str | Path) -> Path | str:
        from ..store import is_postgres_url

        return value if is_postgres_url(value) else Path(value)

    @field_validator("limits")
    @classmethod
    def _known_limits(cls, value: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(value) - _LIMITS)
        if unknown:
            raise ValueError(f"unknown limits {unknown}; expected some of {sorted(_LIMITS)}")
        return value

    @model_validator(mode="after")
    def _one_episode(self) -> EpisodeSpec:
        given = {
            "subject_id + prediction_time": self.subject_id is not None or self.prediction_time is not None,
            "bench + qid": self.bench is not None or self.qid is not None,
            "question": self.question is not None,
        }
        chosen = [k for k, v in given.items() if v]
        if len(chosen) != 1:
            raise ValueError(f"give exactly one episode: subject_id + prediction_time, bench + qid, or question "
                             f"(got {', '.join(chosen) or 'none'})")
        if chosen[0] == "subject_id + prediction_time" and (self.subject_id is None or self.prediction_time is None):
            raise ValueError("subject_id and prediction_time go together")
        if chosen[0] == "bench + qid" and (self.bench is None or not self.qid):
            raise ValueError("bench and qid go together")
        return self

    def resolved(self) -> EpisodeSpec:
        """The same episode with every path absolute (symlinks resolved), so that a process started in
        another folder (``clinseek mcp http`` serving a token minted elsewhere) opens the same files."""
        def absolute(path: Path | None) -> Path | None:
            return None if path is None else path.expanduser().resolve()

        store = self.store if isinstance(self.store, str) else absolute(self.store)
        return self.model_copy(update=dict(
            store=store, bench=absolute(self.bench), knowledge_cache=absolute(self.knowledge_cache),
            docs=tuple(d.expanduser().resolve() for d in self.docs), cxr_root=absolute(self.cxr_root),
            imaging_weights=absolute(self.imaging_weights), candidate_tables=absolute(self.candidate_tables)))

    def describe(self) -> str:
        """A short human label (``subject_id 10002610 at 2127-04-12 19:51:01``, ``question q1 of bench``)."""
        if self.subject_id is not None and self.prediction_time is not None:
            return f"subject_id {self.subject_id} at {self.prediction_time.isoformat(sep=' ')} ({self.policy})"
        if self.question is not None:
            return f"question {self.question.get('qid')!r}"
        return f"question {self.qid!r} of {self.bench}"


async def check_spec(spec: EpisodeSpec) -> None:
    """Open the episode of ``spec`` and close it again: what ``clinseek mcp token`` does before it mints a
    token, so that a token never stands for an episode its server cannot open.

    Raises:
        ClinseekError: what :func:`open_spec` raises (an unknown patient, question, tool or policy, a
            store that is not a clinseek store, ...).
    """
    async with await open_spec(spec):
        pass


async def open_spec(spec: EpisodeSpec) -> EpisodeSession:
    """Open the episode of ``spec`` through the front door (close it with ``aclose()``).

    Raises:
        ClinseekError: what ``clinseek.open_episode_async`` / ``open_question_episode_async`` raise (an
            unknown patient, question or tool, a store that is not a clinseek store, ...).
    """
    from ..agent import AgentBudget, Sources
    from ..api import open_episode_async, open_question_episode_async
    from ..bench import Question
    from ..imaging import ImagingConfig
    from ..knowledge import KnowledgeConfig

    knowledge = None
    if spec.knowledge == "offline":
        knowledge = KnowledgeConfig(cache_dir=spec.knowledge_cache, folders=spec.docs,
                                    store=spec.store if isinstance(spec.store, Path) else None)
    sources = Sources(knowledge=knowledge, cxr_root=spec.cxr_root, candidate_tables=spec.candidate_tables,
                      imaging=ImagingConfig(weights_dir=spec.imaging_weights, device=spec.imaging_device))
    common: dict[str, Any] = dict(
        tools=spec.tools, limits=Limits(**spec.limits), sources=sources, vision=spec.pictures,
        budget=AgentBudget(max_tool_chars=spec.max_tool_chars) if spec.max_tool_chars else None)
    if spec.subject_id is not None and spec.prediction_time is not None:
        return await open_episode_async(
            spec.store, spec.subject_id, spec.prediction_time, policy=spec.policy, target_hadm_id=spec.target_hadm_id,
            target_stay_id=spec.target_stay_id, study_ids=spec.study_ids, dicom_ids=spec.dicom_ids,
            hide_cxr_reports=spec.hide_cxr_reports, candidates=spec.candidates, **common)
    if spec.question is not None:
        question = Question.model_validate(spec.question)
        return await open_question_episode_async([question], question.qid, spec.store, **common)
    assert spec.bench is not None and spec.qid is not None  # the validator said so
    return await open_question_episode_async(spec.bench, spec.qid, spec.store, **common)

