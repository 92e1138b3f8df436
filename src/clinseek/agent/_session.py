"""One sealed episode with the tools an agent is offered on it, opened by the caller and closed by the caller.

:func:`open_session` (any patient and cutoff) and :func:`open_question_session` (a benchmark question's
episode, task turns and linked images) are what the runner's agent jobs, ``clinseek tool`` and
``clinseek.open_episode`` open; an MCP server, inspect_ai tools and Ray workers hold the returned
:class:`EpisodeSession`. A tool called through it answers with the text the agent loop shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from .._sync import run_sync
from .._threads import run_cpu_bound
from ..episode import CandidateSource, EpisodeKey, StoreReader, build_episode
from ..errors import ClinseekError
from ..imaging import CxrLocator
from ..knowledge import Knowledge
from ..models import ImageRef, Message, ToolInfo, to_tool_infos
from ..tools import (
    BROWSER_TOOLS,
    IMAGE_TOOLS,
    Limits,
    ToolContext,
    ToolResult,
    attach_browser,
    attach_imaging,
    get_tool,
    tool_schemas,
)
from ._budget import AgentBudget
from ._linked import linked_evidence
from ._loop import default_tools, task_messages
from ._prompts import LinkedEvidence
from ._sources import Sources
from ._toolturn import call_offered, shown_text

if TYPE_CHECKING:
    from ..bench import Question


class ToolReply(BaseModel):
    """What one tool call through an :class:`EpisodeSession` gave."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """The tool called."""
    text: str
    """The text the agent loop shows the model for this call: the output cut at ``AgentBudget.max_tool_chars``
    (announced), then a note for pictures not shown when the session has no vision."""
    result: ToolResult
    """The structured result: ``ok``, ``error_kind``, ``data`` (``{"columns", "rows", "row_count"}`` for
    tables), ``truncated``, ``elapsed_s``, ``images`` (paths)."""

    @property
    def ok(self) -> bool:
        """False when the tool refused or failed in a way the model can fix (``result.error_kind`` says how)."""
        return self.result.ok


class EpisodeSession:
    """A sealed episode (one patient, one cutoff, one policy) and the tools offered on it.

    Use it as a context manager (``with`` or ``async with``) or call :meth:`close`. Tools run with
    :meth:`call_tool_async` (or the sync :meth:`call_tool`); several calls may run at once. Nothing
    here holds a gold label: a question's session keeps only its task turns.

    Attributes:
        context: the tool context (the episode, limits and per-episode tool state); the agent loop runs on it.
        tool_names: the tools offered, in the order their schemas are listed.
        messages: the system and task turns an agent run of the question starts with (``()`` for an
            episode opened by patient and cutoff).
        images: images attached to the task turn by reference (linked CXR images of a multimodal question).
        linked: what a multimodal question's ``<run_context>`` lists (``None`` otherwise).
    """

    def __init__(self, context: ToolContext, tool_names: Sequence[str], *, budget: AgentBudget | None = None,
                 vision: bool = True, messages: Sequence[Message] = (), images: Sequence[ImageRef] = (),
                 linked: LinkedEvidence | None = None, on_close: Sequence[Callable[[], None]] = ()) -> None:
        self.context = context
        self.tool_names = tuple(tool_names)
        self.messages = tuple(messages)
        self.images = tuple(images)
        self.linked = linked
        self._budget = budget or AgentBudget()
        self._vision = vision
        self._on_close = list(on_close)

    @property
    def key(self) -> EpisodeKey:
        """Patient, cutoff, policy, hidden encounters and linked CXR ids the episode is pinned to."""
        return self.context.episode.key

    @property
    def vision(self) -> bool:
        """Whether the caller is shown pictures (else a tool's pictures are a note in the reply's text)."""
        return self._vision

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return self.context.episode.closed

    @property
    def answer(self) -> list[str] | None:
        """The items of the last successful ``ehr.finish`` call (``None`` before one)."""
        found = self.context.state.get("answer")
        return list(found) if isinstance(found, list | tuple) else None

    def tools(self) -> list[ToolInfo]:
        """The offered tools as a model is offered them (canonical dotted name, description, JSON Schema of the
        arguments object), in :attr:`tool_names` order: what MCP's ``tools/list`` and inspect_ai's ``ToolDef``
        want."""
        return to_tool_infos(tool_schemas(self.tool_names))

    async def call_tool_async(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> ToolReply:
        """Run tool ``name`` with ``arguments`` (a dict, a JSON object string, or ``None``).

        A tool that is not offered, bad arguments and every refusal come back as a reply with ``ok``
        False (``result.error_kind``: ``unknown_tool``, ``bad_argument``, ``read_only``, ``timeout`` ...).

        Raises:
            ClinseekError: the session is closed.
            Exception: an infrastructure failure inside the tool (never shown to a model as data).
        """
        if self.closed:
            raise ClinseekError(f"the episode of subject_id {self.key.subject_id} is closed")
        result = await call_offered(self.context, self.tool_names, name, arguments)
        return ToolReply(name=name, text=shown_text(result, self._budget.max_tool_chars, vision=self._vision),
                         result=result)

    def call_tool(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> ToolReply:
        """Sync twin of :meth:`call_tool_async` (not inside a running event loop)."""
        return run_sync(self.call_tool_async, name, arguments)

    def call_on_close(self, close: Callable[[], None]) -> None:
        """Run ``close`` when the session closes, after the episode (the last registered first)."""
        self._on_close.append(close)

    def close(self) -> None:
        """Close the episode and what the session opened for it (its knowledge source, its work folder)."""
        if self.closed:
            return
        self.context.episode.close()
        for close in reversed(self._on_close):
            close()

    async def aclose(self) -> None:
        """:meth:`close` off the event loop."""
        await run_cpu_bound(self.close)

    def __enter__(self) -> EpisodeSession:
        return self

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    async def __aenter__(self) -> EpisodeSession:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, err: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self.tool_names)} tools"
        return f"EpisodeSession(subject_id={self.key.subject_id}, prediction_time={self.key.prediction_time}, {state})"


def offered_tools(limits: Limits, *, browser: bool = False, imaging: bool = False) -> tuple[str, ...]:
    """The tools an agent is offered by default: every ``ehr.*`` tool that can run under ``limits``, the
    ``browser.*`` tools with a knowledge source, the ``image.*`` tools with linked images (the reference's
    16 + 3 + 6)."""
    return default_tools(limits) + (BROWSER_TOOLS if browser else ()) + (IMAGE_TOOLS if imaging else ())


def open_session(
    store: StoreReader | Path | str,
    key: EpisodeKey,
    *,
    candidates: Mapping[str, CandidateSource] | None = None,
    tools: Sequence[str] | None = None,
    limits: Limits | None = None,
    budget: AgentBudget | None = None,
    sources: Sources | None = None,
    artifact_dir: Path | None = None,
    vision: bool = True,
) -> EpisodeSession:
    """Build the sealed episode of ``key`` from ``store`` and offer tools on it (blocking: DuckDB work).

    Args:
        store: an open store reader (``clinseek.episode.open_store_reader``; the caller closes it after its
            sessions), or the store file (the episode opens a reader of its own and closes it with itself).
        key: patient, cutoff, policy, hidden encounters, linked CXR ids.
        candidates: candidate tables by task name (``clinseek.episode.build_episode``).
        tools: tools offered (default: :func:`offered_tools` for what ``sources`` attaches).
        limits: caps and timeouts of every tool call.
        budget: the budget whose ``max_tool_chars`` cuts the text shown (as in the agent loop).
        sources: an opened ``Knowledge`` for the ``browser.*`` tools (the caller closes it) with its
            ``browser`` budgets; ``cxr_root`` and ``imaging`` for the ``image.*`` tools on the linked images.
        artifact_dir: where imaging tools write (default: the imaging session's own temporary folder).
        vision: the caller is shown pictures (else a tool's pictures are replaced by a note in the text).

    Raises:
        ClinseekError: ``sources.knowledge`` is a configuration, not an opened source
            (``clinseek.runner.open_run_knowledge`` opens one).
        EpisodeError: the subject is not in the store, a candidate table is invalid.
        StoreError: the store is missing or not a clinseek store.
        PolicyError: an unknown policy version.
        RegistryError: a tool name that is not registered.
        ImagingError: a visible linked image has no file under ``cxr_root``.
    """
    limits, sources = limits or Limits(), sources or Sources()
    knowledge = _opened(sources)
    offered = tuple(tools) if tools is not None else offered_tools(
        limits, browser=knowledge is not None, imaging=sources.cxr_root is not None)
    for name in offered:
        get_tool(name)  # RegistryError for a name that is not registered, before the episode is built
    episode = build_episode(store, key, candidates=candidates)
    try:
        ctx = ToolContext(episode, limits, _lists(candidates))
        if knowledge is not None:
            attach_browser(ctx, knowledge, sources.browser)
        if sources.cxr_root is not None:
            attach_imaging(ctx, CxrLocator((Path(sources.cxr_root),)), sources.imaging, artifact_dir)
    except BaseException:
        episode.close()
        raise
    return EpisodeSession(ctx, offered, budget=budget, vision=vision)


def open_question_session(
    store: StoreReader | Path | str,
    question: Question,
    *,
    tools: Sequence[str] | None = None,
    limits: Limits | None = None,
    budget: AgentBudget | None = None,
    sources: Sources | None = None,
    artifact_dir: Path,
    fitted_dir: Path,
    vision: bool = True,
) -> EpisodeSession:
    """The session an agent run of ``question`` gets: its episode, candidate tables, tools, task turns and
    linked images, exactly as the runner builds them (blocking). The gold label stays out of it.

    ``artifact_dir`` receives what the imaging tools write, ``fitted_dir`` the model-ready copies of the
    linked images (shared by runs: a copy is made once). The ``image.*`` tools are offered (by default) and
    attached only for a multimodal question with ``sources.cxr_root``; at most ``sources.max_images`` images
    go with the task turn; ``sources.candidate_tables`` is AgentEHR's ``candidate_table.db``
    (``clinseek.bench.question_candidates``). Other arguments as in :func:`open_session`.

    Raises:
        ClinseekError: ``candidate_tables`` lacks the question's task (and what :func:`open_session` raises).
    """
    from ..bench import episode_key, question_candidates

    limits, sources = limits or Limits(), sources or Sources()
    multimodal = question.task_type == "multimodal" and sources.cxr_root is not None
    offered = tuple(tools) if tools is not None else offered_tools(
        limits, browser=_opened(sources) is not None, imaging=multimodal)
    location = store.location if isinstance(store, StoreReader) else store
    candidates = question_candidates(question, location, sources.candidate_tables)
    session = open_session(store, episode_key(question), candidates=candidates, tools=offered, limits=limits,
                           budget=budget, sources=replace(sources, cxr_root=None), vision=vision)
    try:
        linked, images = linked_evidence(
            session.context, question, cxr_root=sources.cxr_root, imaging=sources.imaging,
            max_images=sources.max_images, artifact_dir=artifact_dir, fitted_dir=fitted_dir,
            imaging_tools=any(t in IMAGE_TOOLS for t in offered))
    except BaseException:
        session.close()
        raise
    session.linked, session.images = linked, tuple(images)
    session.messages = tuple(task_messages(question, offered, images=images, linked=linked, vision=vision))
    return session


def _opened(sources: Sources) -> Knowledge | None:
    """The opened knowledge source of ``sources`` (``None``: no browser tools)."""
    if sources.knowledge is None or isinstance(sources.knowledge, Knowledge):
        return sources.knowledge
    raise ClinseekError("Sources.knowledge is a KnowledgeConfig: open it first (clinseek.runner.open_run_knowledge) "
                        "and pass the opened Knowledge")


def _lists(candidates: Mapping[str, CandidateSource] | None) -> dict[str, list[str]]:
    """The candidate lists given as lists (Arrow tables stay in the episode only)."""
    return {name: list(source) for name, source in (candidates or {}).items() if isinstance(source, list | tuple)}
