"""inspect_ai fixtures: a small text + multimodal benchmark, and one mock-model eval of both tasks in both
modes beside ``clinseek.run`` of the same policy (built once per session; every check reads them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _inspect_helpers import MockRuns

TASKS = ["Inpatient_Mortality", "labevents", "mm_mortality", "cxr_finding_enumeration"]


@pytest.fixture(autouse=True)
def _inspect_ai() -> None:
    """Every test here needs inspect_ai (the [dev] extra brings it); it is imported when a test runs,
    not when the suite is collected (importing it takes seconds)."""
    pytest.importorskip("inspect_ai")


@pytest.fixture(scope="session")
def inspect_bench(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One question each of a risk, a decision, and two multimodal tasks (with linked CXR images)."""
    from clinseek.bench import build_benchmark

    out = tmp_path_factory.mktemp("inspect_bench") / "bench"
    build_benchmark(synthetic_store, tasks=TASKS, per_task=1, seed=42, out=out)
    return out


@pytest.fixture(scope="session")
def mock_runs(synthetic_store: Path, inspect_bench: Path, tmp_path_factory: pytest.TempPathFactory) -> MockRuns:
    pytest.importorskip("inspect_ai")
    from _inspect_helpers import PolicyModel, mock_outputs
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    import clinseek
    from clinseek.imaging import store_cxr_root
    from clinseek.inspect_tasks import clinseek_mm, clinseek_text, import_inspect_log

    root = tmp_path_factory.mktemp("inspect_mock")
    model = get_model("mockllm/model", custom_outputs=mock_outputs())
    kinds = {"text": clinseek_text, "mm": clinseek_mm}
    tasks = {(kind, mode): make(bench=str(inspect_bench), store=str(synthetic_store), mode=mode)
             for kind, make in kinds.items() for mode in ("agent", "curated")}
    logs = inspect_eval(list(tasks.values()), model=model, log_dir=str(root / "logs"), display="none",
                        max_tasks=4)
    found = {key: Path(log.location) for key, log in zip(tasks, logs, strict=True)}
    assert all(log.status == "success" for log in logs), [log.error for log in logs]
    for log in found.values():
        import_inspect_log(log, root / "inspect_runs")
    settings = clinseek.RunSettings(sources=clinseek.Sources(cxr_root=store_cxr_root(synthetic_store)))
    clinseek.run(inspect_bench, synthetic_store, PolicyModel(), root / "clinseek_runs", mode="both", settings=settings)
    return MockRuns(found, root / "inspect_runs", root / "clinseek_runs")
