"""clinseek: agentic clinical evidence seeking over MIMIC-IV shaped EHRs.

The front door (docs/api.md)::

    clinseek.run(bench, store, model, out, mode=..., settings=RunSettings(...))   # -> RunSummary
    clinseek.score(results, out=...)                                            # -> ScoredResults
    clinseek.report(folders, out="report.html")                                 # -> ReportStats
    with clinseek.open_episode(store, subject_id, prediction_time) as episode:  # -> EpisodeSession
        episode.call_tool("ehr.run_sql_query", {"sql_query": "SELECT ..."})

each with an async twin (``run_async`` ...), and the settings in five groups: ``ModelSettings``,
``RunOptions``, ``AgentBudget``, ``Limits`` and ``Sources`` in one ``RunSettings``.

Importing this package does nothing beyond defining names: no connections, no environment reads, no
model loading; the names above load their modules on first use. The stages are packages of their own
(``clinseek.schema``, ``clinseek.store``, ``clinseek.runner``...).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._version import __version__
    from .agent import AgentBudget, EpisodeSession, Sources, ToolInfo, ToolReply
    from .api import (
        open_episode,
        open_episode_async,
        open_question_episode,
        open_question_episode_async,
        report,
        report_async,
        run,
        run_async,
        score,
        score_async,
    )
    from .errors import ClinseekError
    from .runner import ModelSettings, RunOptions, RunSettings
    from .tools import Limits

_LAZY: dict[str, str] = {
    **dict.fromkeys(("open_episode", "open_episode_async", "open_question_episode", "open_question_episode_async",
                     "report", "report_async", "run", "run_async", "score", "score_async"), "clinseek.api"),
    **dict.fromkeys(("AgentBudget", "EpisodeSession", "Sources", "ToolInfo", "ToolReply"), "clinseek.agent"),
    **dict.fromkeys(("ModelSettings", "RunOptions", "RunSettings"), "clinseek.runner"),
    "Limits": "clinseek.tools",
    "ClinseekError": "clinseek.errors",
    "__version__": "clinseek._version",  # importlib.metadata (~50 modules) only when asked
}
"""Each front-door name and the module it is loaded from on first use."""


def __getattr__(name: str) -> Any:
    """Load a front-door name from its module on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'clinseek' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function (no submodule shares a front-door name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "AgentBudget",
    "ClinseekError",
    "EpisodeSession",
    "Limits",
    "ModelSettings",
    "RunOptions",
    "RunSettings",
    "Sources",
    "ToolInfo",
    "ToolReply",
    "__version__",
    "open_episode",
    "open_episode_async",
    "open_question_episode",
    "open_question_episode_async",
    "report",
    "report_async",
    "run",
    "run_async",
    "score",
    "score_async",
]
