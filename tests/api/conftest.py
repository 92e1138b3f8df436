"""Front-door fixtures: a small benchmark built from the session's synthetic store."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def small_bench(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One risk and one decision question (Inpatient_Mortality, labevents) from the synthetic store."""
    from clinseek.bench import build_benchmark

    out = tmp_path_factory.mktemp("front_door_bench") / "bench"
    build_benchmark(synthetic_store, tasks=["Inpatient_Mortality", "labevents"], per_task=1, seed=42, out=out)
    return out
