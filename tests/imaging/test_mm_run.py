"""ClinSeek-Bench-MM end to end on the synthetic store: `clinseek run --mode agent|curated` with the offline
baselines, the store's own images attached by reference, image tools offered, reports hidden where they
state the answer, and the per-question setting recorded in the results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinseek.bench import MultimodalRow, to_question
from clinseek.cli import app
from clinseek.runner import read_results
from clinseek.tools import IMAGE_TOOLS

MM_TASKS = ("cxr_finding_presence", "cxr_change_comparison", "phenotype")


@pytest.fixture(scope="module")
def mm_bench(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from clinseek.bench import build_benchmark

    out = tmp_path_factory.mktemp("mm_bench") / "bench"
    build_benchmark(synthetic_store, tasks=list(MM_TASKS), per_task=2, seed=3, out=out)
    return out


@pytest.fixture(scope="module")
def mm_runs(mm_bench: Path, synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mm_runs")
    for mode in ("agent", "curated"):
        result = CliRunner().invoke(app, ["run", "--bench", str(mm_bench), "--store", str(synthetic_store),
                                          "--model", "baseline:evidence", "--out", str(out), "--mode", mode,
                                          "--no-progress", "--concurrency", "2"])
        assert result.exit_code == 0, result.output
    return out


def _rows(out: Path, mode: str) -> list:
    (results,) = (out / "clinseek-bench-mm" / mode).glob("*/results.jsonl")
    return read_results(results).rows


@pytest.mark.parametrize("mode", ["agent", "curated"])
def test_every_multimodal_row_runs_without_infra_errors(mm_runs: Path, mode: str) -> None:
    rows = _rows(mm_runs, mode)
    assert rows and {r.task_type for r in rows} == {"multimodal"}
    assert [r.error for r in rows if r.status == "infra_error"] == []


@pytest.mark.parametrize("mode", ["agent", "curated"])
def test_linked_images_travel_by_reference_only(mm_runs: Path, mode: str) -> None:
    for row in _rows(mm_runs, mode):
        task_turn = next(m for m in row.messages if m["role"] == "user")
        paths = [i["path"] for i in task_turn.get("images", [])]
        assert paths and all(Path(p).is_file() for p in paths), row.qid
        assert "base64" not in json.dumps(row.messages)


def test_agent_rows_offer_image_tools_and_state_the_run_context(mm_runs: Path) -> None:
    manifest = json.loads(next((mm_runs / "clinseek-bench-mm" / "agent").glob("*/run_manifest.json")).read_text())
    assert set(IMAGE_TOOLS) <= set(manifest["tools"])
    for row in _rows(mm_runs, "agent"):
        text = next(m for m in row.messages if m["role"] == "user")["content"]
        assert "<run_context>" in text and "imaging_tools_available: yes" in text
        hidden = row.manifest["hide_cxr_reports"]
        assert ("reports_inlined: withheld" in text) == hidden
        assert ("<linked_radiology_report" in text) == (not hidden), row.qid


def test_finding_questions_hide_reports_and_phenotype_questions_do_not(mm_runs: Path) -> None:
    by_category = {r.category: r.manifest["hide_cxr_reports"] for r in _rows(mm_runs, "agent")}
    assert by_category["cxr_finding_presence"] is True and by_category["cxr_change_comparison"] is True
    assert by_category["phenotype"] is False


def test_curated_package_has_no_report_text_when_hidden(mm_runs: Path) -> None:
    for row in _rows(mm_runs, "curated"):
        text = next(m for m in row.messages if m["role"] == "user")["content"]
        if row.manifest["hide_cxr_reports"]:
            assert "### cxr.reports" not in text and "IMPRESSION:" not in text.split("<ehr_context>")[-1].split(
                "### note.")[0], row.qid


def _row(**extra: object) -> MultimodalRow:
    base = {"qid": "q", "subject_id": 1, "prediction_time": "2150-01-01 00:00:00", "task": "ehrxqa_image",
            "source_benchmark": "ehrxqa", "question": "?", "scope": "patient_scope",
            "snapshot_spec": {"time_policy": "inclusive_leq_cutoff"},
            "leakage_policy_version": "multimodal-strict-temporal-scope-v1", "study_ids": [5], "label": "yes"}
    return MultimodalRow.model_validate({**base, **extra})


def test_row_field_overrides_the_default() -> None:
    assert to_question(_row()).hide_cxr_reports is True
    assert to_question(_row(hide_linked_reports=False)).hide_cxr_reports is False
    assert to_question(_row(task="medmod_phenotyping", source_benchmark="medmod")).hide_cxr_reports is False
    assert to_question(_row(task="medmod_phenotyping", hide_linked_reports=True)).hide_cxr_reports is True


class ScriptedVision:
    """Turn 1: look at the first image with dicom_processor and ask the classifier; turn 2: finish."""

    name, supports_native_tools = "fake:vision", True

    def __init__(self) -> None:
        self.requests: list[list] = []

    async def generate(self, messages, tools=(), config=None):
        from clinseek.models import Message, ModelResponse, ToolCall, Usage

        self.requests.append(list(messages))
        if len(self.requests) == 1:
            text = messages[1].content
            dicom_id = text.split("Images (pass the dicom_id")[1].split("\n- ")[1].split(":")[0]
            calls = [ToolCall(id="c1", name="image.dicom_processor", arguments={"dicom_path": dicom_id}),
                     ToolCall(id="c2", name="image.chest_xray_classifier", arguments={"image_path": dicom_id})]
        else:
            calls = [ToolCall(id="c3", name="ehr.finish", arguments={"response": ["yes"]})]
        reply = Message(role="assistant", tool_calls=calls)
        return ModelResponse(model=self.name, message=reply, usage=Usage(), latency_s=0.0, stop_reason="tool_calls")

    async def aclose(self) -> None: ...


def test_tool_pictures_reach_the_model_and_missing_weights_do_not_stop_the_run(
        mm_bench: Path, synthetic_store: Path, tmp_path: Path) -> None:
    import anyio

    from clinseek.bench import load_questions
    from clinseek.imaging import store_cxr_root
    from clinseek.runner import RunOptions, RunSettings, Sources, run_benchmark

    question = next(q for q in load_questions(mm_bench) if q.category == "cxr_finding_presence")
    model = ScriptedVision()
    settings = RunSettings(run=RunOptions(concurrency=1), sources=Sources(cxr_root=store_cxr_root(synthetic_store)))
    summary = anyio.run(lambda: run_benchmark([question], synthetic_store, "agent", model, tmp_path, settings=settings))
    row = read_results(Path(summary.runs[0].out_dir) / "results.jsonl").rows[0]
    assert row.status == "answered" and row.answer == ["yes"]
    tool_turns = {m["tool_call_id"]: m for m in row.messages if m["role"] == "tool"}
    (picture,) = tool_turns["c1"]["images"]
    assert Path(picture["path"]).is_file() and str(tmp_path) in picture["path"]
    assert tool_turns["c2"]["is_error"] and "unavailable" in tool_turns["c2"]["content"]
    seen = next(m for m in model.requests[1] if m.role == "tool" and m.tool_call_id == "c1")
    assert [i.path for i in seen.images] == [picture["path"]]  # sent to the model as an image, by path


def test_a_missing_linked_image_is_that_rows_clear_error(mm_bench: Path, synthetic_store: Path, tmp_path: Path) -> None:
    import anyio

    from clinseek.bench import load_questions
    from clinseek.runner import RunOptions, RunSettings, Sources, run_benchmark

    questions = [q for q in load_questions(mm_bench) if q.category == "cxr_finding_presence"]
    empty = tmp_path / "no_images"
    empty.mkdir()
    settings = RunSettings(run=RunOptions(concurrency=1), sources=Sources(cxr_root=empty))
    summary = anyio.run(lambda: run_benchmark(questions, synthetic_store, "curated", "baseline:evidence", tmp_path,
                                              settings=settings))
    rows = read_results(Path(summary.runs[0].out_dir) / "results.jsonl").rows
    assert len(rows) == len(questions) and {r.status for r in rows} == {"infra_error"}
    assert all("linked CXR image not found" in (r.error or "") and str(empty) in (r.error or "") for r in rows)
