"""Export from real baseline runs: counts, sample shape, Parquet = JSONL, determinism, all-or-nothing output."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from clinseek.distill import ExportFilters, export_dataset, read_card, read_samples
from clinseek.errors import ClinseekError
from clinseek.runner import read_results
from clinseek.scoring import score_path

BASELINES = ExportFilters(include_baselines=True)
"""The fixtures' teacher is the scripted baseline:evidence (refused unless asked for)."""


@pytest.fixture(scope="module")
def exported(distill_runs: Path, tmp_path_factory: pytest.TempPathFactory):
    return export_dataset([distill_runs], tmp_path_factory.mktemp("ds") / "out", ExportFilters(include_baselines=True, min_f1=0.5))


def _all_rows(runs: Path):
    return [row for path in sorted(runs.rglob("results.jsonl")) for row in read_results(path).rows]


def test_every_run_is_either_exported_or_refused_with_a_reason(exported, distill_runs: Path) -> None:
    rows = _all_rows(distill_runs)
    assert exported.card.samples + exported.card.refused == len(rows)
    assert all(r.reasons for r in exported.refusals)
    curated = [r for r in rows if r.mode == "curated"]
    assert sum("not_agent_mode" in r.reasons for r in exported.refusals) == len(curated)


def test_exported_samples_pass_the_filters_and_match_the_scorer(exported, distill_runs: Path) -> None:
    per_run = {(s.qid, s.run_index): s.f1 for q in score_path(distill_runs).questions if q.mode == "agent"
               for s in q.runs}
    assert exported.samples, "the evidence baseline answers some questions right"
    for sample in exported.samples:
        assert sample.f1 >= 0.5
        assert sample.f1 == pytest.approx(per_run[(sample.qid, sample.run_index)])
    below = [r for r in exported.refusals if "below_min_f1" in r.reasons]
    assert below and all(per_run[(r.qid, r.run_index)] < 0.5 for r in below)


def test_card_counts_per_task_and_records_sources_and_teacher(exported) -> None:
    card = exported.card
    tasks: dict[str, int] = {}
    for sample in exported.samples:
        tasks[sample.task] = tasks.get(sample.task, 0) + 1
    assert card.per_task == dict(sorted(tasks.items()))
    assert card.teacher_models == ["baseline:evidence"]
    assert {s.mode for s in card.sources} == {"agent", "curated"}
    assert all(s.manifest_sha256 and len(s.manifest_sha256) == 64 for s in card.sources)
    assert sum(s.exported for s in card.sources) == card.samples
    assert card.length_method == "approximate" and all(s.length_method == "approximate" for s in exported.samples)
    assert read_card(exported.out) == card
    readme = (exported.out / "README.md").read_text()
    assert "approximately" in readme and "baseline:evidence" in readme


def test_samples_are_openai_messages_with_object_arguments_and_wire_names(exported) -> None:
    for sample in exported.samples:
        roles = [m["role"] for m in sample.messages]
        assert roles[:2] == ["system", "user"] and set(roles) <= {"system", "user", "assistant", "tool"}
        answered: set[str] = set()
        for message in sample.messages:
            for call in message.get("tool_calls", []):
                assert call["type"] == "function" and isinstance(call["function"]["arguments"], dict)
                assert call["function"]["name"].startswith("ehr__")
                answered.add(call["id"])
            if message["role"] == "tool":
                assert message["tool_call_id"] in answered
        names = {t["function"]["name"] for t in sample.tools}
        assert "ehr__finish" in names and "ehr__run_sql_query" in names
        used = {c["function"]["name"] for m in sample.messages for c in m.get("tool_calls", [])}
        assert used <= names


def test_no_gold_label_reaches_a_sample(exported) -> None:
    line = (exported.out / "train.jsonl").read_text().splitlines()[0]
    assert '"gold"' not in line and '"label"' not in line


def test_parquet_holds_the_same_samples_as_jsonl(exported) -> None:
    table = pq.read_table(exported.out / "train.parquet").to_pylist()
    samples = read_samples(exported.out)
    assert [r["sample_id"] for r in table] == [s.sample_id for s in samples]
    for row, sample in zip(table, samples, strict=True):
        assert json.loads(row["messages"]) == sample.messages
        assert json.loads(row["tools"]) == sample.tools
        assert row["f1"] == sample.f1 and row["n_tokens"] == sample.n_tokens


def test_export_is_deterministic(distill_runs: Path, tmp_path: Path) -> None:
    a = export_dataset([distill_runs], tmp_path / "a", BASELINES)
    b = export_dataset([distill_runs], tmp_path / "b", BASELINES)
    for name in ("train.jsonl", "train.parquet", "refused.jsonl", "card.json", "README.md"):
        assert (a.out / name).read_bytes() == (b.out / name).read_bytes(), name
    assert [s.sample_id for s in a.samples] == sorted(s.sample_id for s in a.samples)


def test_a_non_empty_output_folder_is_refused(distill_runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(ClinseekError, match="not an empty folder"):
        export_dataset([distill_runs], out)
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_a_failed_export_leaves_nothing_behind(distill_runs: Path, tmp_path: Path) -> None:
    with pytest.raises(ClinseekError):
        export_dataset([distill_runs], tmp_path / "out", ExportFilters(include_baselines=True, exclude_benchmarks=[str(tmp_path / "nope")]))
    assert list(tmp_path.iterdir()) == []


def test_a_results_file_without_its_manifest_is_refused(agent_results: Path, tmp_path: Path) -> None:
    lonely = tmp_path / "run" / "results.jsonl"
    lonely.parent.mkdir()
    lonely.write_bytes(agent_results.read_bytes())
    with pytest.raises(ClinseekError, match=r"no run_manifest\.json"):
        export_dataset([lonely], tmp_path / "out")


def test_the_same_run_given_twice_is_read_once(distill_runs: Path, agent_results: Path, tmp_path: Path) -> None:
    result = export_dataset([distill_runs, agent_results], tmp_path / "out", BASELINES)
    assert len(result.card.sources) == 2


def test_a_validation_split_never_shares_a_patient(distill_runs: Path, tmp_path: Path) -> None:
    result = export_dataset([distill_runs], tmp_path / "out", ExportFilters(include_baselines=True, min_f1=0.0, val_fraction=0.5))
    train, val = read_samples(result.out, "train"), read_samples(result.out, "val")
    assert train and val and len(train) + len(val) == result.card.samples
    assert {s.subject_id for s in train}.isdisjoint({s.subject_id for s in val})
    assert result.card.per_split == {"train": len(train), "val": len(val)}
    assert {"val.jsonl", "val.parquet"} <= set(result.card.files)
