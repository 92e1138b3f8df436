"""Export from a ``clinseek demo`` run: both baselines, text and multimodal, then render; its benchmark excluded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinseek.distill import ExportFilters, export_dataset, render_dataset
from clinseek.runner import read_results


@pytest.fixture(scope="module")
def demo_dir(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    import anyio

    from clinseek.demo import DemoSettings, run_demo

    out = tmp_path_factory.mktemp("demo") / "demo"
    tasks = ["Inpatient_Mortality", "labevents", "cxr_finding_presence"]
    anyio.run(lambda: run_demo(out, settings=DemoSettings(per_task=2, n_resamples=200), store=synthetic_store,
                               tasks=tasks))
    return out


def test_export_from_a_demo_run_counts_every_run(demo_dir: Path, tmp_path: Path) -> None:
    files = sorted((demo_dir / "runs").rglob("results.jsonl"))
    rows = [r for f in files for r in read_results(f).rows]
    result = export_dataset([demo_dir / "runs"], tmp_path / "ds", ExportFilters(include_baselines=True, min_f1=0.0))
    card = result.card
    assert len(card.sources) == len(files) == 8  # 2 benchmarks x 2 modes x 2 baselines
    assert card.samples + card.refused == len(rows)
    assert card.refused_by_reason["not_agent_mode"] == sum(r.mode == "curated" for r in rows)
    assert set(card.teacher_models) == {"baseline:evidence", "baseline:null"}
    agent_mm = [r for r in rows if r.mode == "agent" and r.benchmark == "clinseek-bench-mm"]
    with_images = [r for r in agent_mm if any(m.get("images") for m in r.messages)]
    assert card.refused_by_reason.get("has_images", 0) == len(with_images)
    assert sum(card.per_task.values()) == card.samples > 0


def test_excluding_the_demo_benchmark_refuses_every_agent_run(demo_dir: Path, tmp_path: Path) -> None:
    result = export_dataset([demo_dir / "runs"], tmp_path / "ds",
                            ExportFilters(include_baselines=True, min_f1=0.0, exclude_benchmarks=[str(demo_dir / "bench")]))
    agent_runs = [r for r in result.refusals if "not_agent_mode" not in r.reasons]
    assert result.samples == [] and agent_runs
    assert all("in_excluded_benchmark" in r.reasons for r in agent_runs)
    assert (tmp_path / "ds" / "train.jsonl").read_text() == ""
    card = json.loads((tmp_path / "ds" / "card.json").read_text())
    assert len(card["leakage_refusals"]) == len(agent_runs)


def test_demo_samples_render_and_round_trip(demo_dir: Path, hermes_tokenizer: Path, tmp_path: Path) -> None:
    result = export_dataset([demo_dir / "runs"], tmp_path / "ds", ExportFilters(include_baselines=True, min_f1=0.0))
    report = render_dataset(result.out, hermes_tokenizer, tmp_path / "r")
    assert report.rendered == result.card.samples and report.round_trip_failures == [] and report.mask_failures == []
