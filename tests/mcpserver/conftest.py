"""MCP server fixtures: a case on the ingested MIMIC-IV demo (skips without the shared data)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _tool_cases import Case, pick_case

pytest.importorskip("mcp", reason="the [mcp] extra is not installed")


@pytest.fixture(scope="session")
def demo_case(demo_store: Path) -> Case:
    """The demo store's admission with the most lab rows, cut halfway through (tests/tools' case)."""
    return pick_case(demo_store)


@pytest.fixture(scope="session")
def synthetic_case(synthetic_store: Path) -> Case:
    """The same pick on the synthetic store."""
    return pick_case(synthetic_store)
