"""Fixtures of the knowledge tests: the full offline corpus (built once, with the demo store's
dictionaries), a small folder corpus for browser mechanics, and a loopback web server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clinseek.knowledge import Knowledge, KnowledgeConfig, KnowledgeDocument, kb_url, open_knowledge

from ._server import LoopbackServer


@pytest.fixture(scope="session")
def kb_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kb_cache")


@pytest.fixture(scope="session")
def full_knowledge(demo_store: Path, kb_cache: Path) -> Knowledge:
    """The bundled corpus enriched by the MIMIC-IV demo store, plus the benchmark task definitions."""
    from clinseek.bench import TEXT_TASKS
    from clinseek.knowledge import task_documents

    return open_knowledge(KnowledgeConfig(cache_dir=kb_cache, store=demo_store), task_documents(TEXT_TASKS))


LONG_LINES = [f"Line {i}: potassium replacement protocol step {i} for adults." for i in range(200)]

SMALL_DOCS = (
    KnowledgeDocument(kb_url("notes", "potassium"), "Potassium protocol", "\n".join(LONG_LINES), "notes"),
    KnowledgeDocument(kb_url("notes", "sodium"), "Sodium protocol",
                      "Hyponatremia below 135 mEq/L.\nSee [potassium protocol](clinseek-kb://notes/potassium).", "notes"),
    KnowledgeDocument(kb_url("notes", "sepsis"), "Sepsis bundle",
                      "Lactate, blood cultures, antibiotics within one hour.\nLactate above 2 mmol/L.", "notes"),
)


@pytest.fixture(scope="session")
def small_knowledge() -> Knowledge:
    """A tiny in-memory corpus (no bundled sources) for the browser mechanics."""
    return open_knowledge(KnowledgeConfig(bundled=False), SMALL_DOCS)


@pytest.fixture()
def web_server() -> Iterator[LoopbackServer]:
    server = LoopbackServer().start()
    try:
        yield server
    finally:
        server.stop()
