"""Runner test fixtures: loopback fake LLM servers and a test API key."""

from __future__ import annotations

import pytest
from _runner_helpers import SECRET


@pytest.fixture
def api_keys(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    return SECRET


TASKS = ("Inpatient_Mortality", "ED_Hospitalization", "omr")


@pytest.fixture(scope="session")
def demo_bench(demo_store, tmp_path_factory: pytest.TempPathFactory):
    """A small benchmark built from the MIMIC-IV demo store (2 questions per task)."""
    from clinseek.bench import build_benchmark, load_questions

    out = tmp_path_factory.mktemp("demo_bench") / "bench"
    build_benchmark(demo_store, tasks=list(TASKS), per_task=2, seed=42, out=out)
    return out, load_questions(out)


SYNTH_TASKS = ("Inpatient_Mortality", "ICU_Mortality_7day", "labevents", "prescriptions", "transfers", "next_event",
               "diagnoses_icd", "cxr_finding_presence")


@pytest.fixture(scope="session")
def synthetic_bench(synthetic_store, tmp_path_factory: pytest.TempPathFactory):
    """A small benchmark built from the synthetic store: risk, decision and multimodal tasks, one each."""
    from clinseek.bench import build_benchmark, load_questions

    out = tmp_path_factory.mktemp("synthetic_bench") / "bench"
    build_benchmark(synthetic_store, tasks=list(SYNTH_TASKS), per_task=1, seed=42, out=out)
    return out, load_questions(out)


@pytest.fixture(scope="session")
def synthetic_runs(synthetic_bench, synthetic_store, tmp_path_factory: pytest.TempPathFactory):
    """Both baselines run in both modes on ``synthetic_bench`` (once per session)."""
    import anyio

    from clinseek.runner import RunOptions, RunSettings, run_benchmark

    _, questions = synthetic_bench
    out = tmp_path_factory.mktemp("synthetic_runs")
    summaries = {}
    for model in ("baseline:null", "baseline:evidence"):
        summaries[model] = anyio.run(lambda m=model: run_benchmark(questions, synthetic_store, "both", m, out,
                                                                   settings=RunSettings(run=RunOptions(concurrency=4))))
    return out, questions, summaries

