"""Fixtures of the synthetic-store tests: a medium store and many timelines (built once per session)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pytest

from clinseek.store import connect_store, synthesize
from clinseek.store._synth._timeline import Timeline, make_patient, make_timeline


@pytest.fixture(scope="session")
def medium_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """150 patients, seed 11: enough admissions for the evidence and quirk checks."""
    out = tmp_path_factory.mktemp("synth_medium") / "medium.duckdb"
    synthesize(out, patients=150, seed=11)
    return out


@pytest.fixture(scope="session")
def timelines() -> list[Timeline]:
    """3,000 patient timelines (the encounters every table is generated from), for label statistics."""
    rng = np.random.default_rng(5)
    return [make_timeline(make_patient(i, 10_000_000 + i, rng), rng) for i in range(3000)]


@pytest.fixture()
def con(medium_store: Path) -> duckdb.DuckDBPyConnection:
    connection = connect_store(medium_store)
    yield connection
    connection.close()

