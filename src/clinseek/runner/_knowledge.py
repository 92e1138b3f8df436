"""The knowledge source behind the browser tools of a run: opened once per ``run_benchmark`` call,
off the event loop, shared by every episode (each episode gets its own ``PageBrowser``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio.to_thread

from ..errors import ClinseekError
from ..knowledge import Knowledge, KnowledgeConfig, open_knowledge
from ..tools import BROWSER_TOOLS

if TYPE_CHECKING:
    from ._settings import RunSettings

_NOT_IN_HASH = frozenset({"cache", "corpus_problems", "index_dir", "folders", "store"})
"""Fields of the manifest entry that do not change answers (paths and counters; the corpus version covers the content)."""


def wants_browser(settings: RunSettings) -> bool:
    """True when agent runs offer the browser tools: a knowledge source is set and ``settings.run.tools``
    is either the default or names a ``browser.*`` tool.

    Raises:
        ClinseekError: ``settings.run.tools`` names a browser tool but no knowledge source is set.
    """
    tools, knowledge = settings.run.tools, settings.sources.knowledge
    named = tools is not None and any(t in BROWSER_TOOLS for t in tools)
    if named and knowledge is None:
        raise ClinseekError("the browser tools are among the tools but the run has no knowledge source "
                            "(set RunSettings.sources.knowledge, or drop --knowledge off)")
    return knowledge is not None and (tools is None or named)


def open_knowledge_source(config: KnowledgeConfig, *, tasks: bool = True) -> Knowledge:
    """``config`` opened as a run opens it (blocking): the offline index gets the benchmark task definitions
    (unless ``tasks`` is False).

    Raises:
        ClinseekError: an unknown backend, a missing key or URL, or a damaged cached index.
    """
    from ..bench import TEXT_TASKS
    from ..knowledge import task_documents

    extra = task_documents(TEXT_TASKS) if tasks and config.backend == "offline" else ()
    return open_knowledge(config, extra)


async def open_run_knowledge(source: KnowledgeConfig | Knowledge) -> tuple[Knowledge, bool]:
    """``(knowledge, owned)``: an opened source is used as it is; a config is opened in a worker
    thread (the offline index is loaded from ``<cache_dir>/offline/index-<version>`` or built there,
    with the benchmark task definitions added). ``owned`` says the caller must close it.

    Raises:
        ClinseekError: an unknown backend, a missing key or URL, or a damaged cached index.
    """
    if isinstance(source, Knowledge):
        return source, False
    return await anyio.to_thread.run_sync(open_knowledge_source, source), True


def close_knowledge(knowledge: Knowledge) -> None:
    """Close a web backend's HTTP client (the offline backend holds nothing to close)."""
    close = getattr(knowledge.backend, "close", None)
    if callable(close):
        close()


def knowledge_record(knowledge: Knowledge, source: KnowledgeConfig | Knowledge) -> dict[str, Any]:
    """The run manifest's ``knowledge`` entry: ``Knowledge.describe()`` (backend, corpus version or
    endpoint, response cache path / mode / counts, deny list, corpus problems) plus, for a run that
    opened it from a config, the offline index folder and the user folders. Never a credential."""
    record = knowledge.describe()
    if isinstance(source, KnowledgeConfig):
        version = record.get("corpus_version")
        if source.backend == "offline" and source.cache_dir is not None and version:
            record["index_dir"] = str(source.cache_dir / "offline" / f"index-{version}")
        record["folders"] = [str(f) for f in source.folders]
        record["store"] = str(source.store) if source.store else None
    return record


def knowledge_identity(record: dict[str, Any] | None, browser: dict[str, Any] | None) -> dict[str, Any] | None:
    """What of the knowledge entry and browser limits keys resume (not cache paths or counters)."""
    if record is None:
        return None
    return {"knowledge": {k: v for k, v in record.items() if k not in _NOT_IN_HASH}, "browser": browser}

