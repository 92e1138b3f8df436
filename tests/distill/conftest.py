"""Distillation fixtures: offline baseline runs on the synthetic store, hand-edited runs, tiny local tokenizers."""

from __future__ import annotations

from pathlib import Path

import pytest
from _distill_helpers import HERMES_TEMPLATE, XML_TEMPLATE, build_tokenizer

TASKS = ("Inpatient_Mortality", "ED_Hospitalization", "labevents", "transfers")


@pytest.fixture(scope="session")
def distill_bench(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory):
    """A small benchmark from the synthetic store: two risk and two decision tasks, 3 questions each."""
    from clinseek.bench import build_benchmark, load_questions

    out = tmp_path_factory.mktemp("distill_bench") / "bench"
    build_benchmark(synthetic_store, tasks=list(TASKS), per_task=3, seed=42, out=out)
    return out, load_questions(out)


@pytest.fixture(scope="session")
def distill_runs(distill_bench, synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The evidence baseline in both modes on ``distill_bench`` (the runner's real results layout)."""
    import anyio

    from clinseek.runner import RunOptions, RunSettings, run_benchmark

    _, questions = distill_bench
    out = tmp_path_factory.mktemp("distill_runs")
    anyio.run(lambda: run_benchmark(questions, synthetic_store, "both", "baseline:evidence", out,
                                    settings=RunSettings(run=RunOptions(concurrency=4))))
    return out


@pytest.fixture(scope="session")
def agent_results(distill_runs: Path) -> Path:
    """The agent-mode ``results.jsonl`` of ``distill_runs``."""
    return distill_runs / "clinseek-bench-text" / "agent" / "baseline_evidence" / "results.jsonl"


@pytest.fixture(scope="session")
def hermes_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A byte-level BPE tokenizer trained here, saved with a Hermes-style ``<tool_call>`` JSON template."""
    pytest.importorskip("transformers", reason="the [distill] extra (transformers) is not installed")
    return build_tokenizer(tmp_path_factory.mktemp("tok_hermes"), HERMES_TEMPLATE)


@pytest.fixture(scope="session")
def xml_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same tokenizer with a Qwen3-XML-style ``<function=..><parameter=..>`` template."""
    pytest.importorskip("transformers", reason="the [distill] extra (transformers) is not installed")
    return build_tokenizer(tmp_path_factory.mktemp("tok_xml"), XML_TEMPLATE)
