"""clinseek/clinseek_text and clinseek/clinseek_mm under inspect's mock model, offline: the log read back,
converted and scored gives clinseek's own runner's per-question F1, and every tool output is the direct path's."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _inspect_helpers import MockRuns

import clinseek
from clinseek.bench import load_questions
from clinseek.errors import ClinseekError
from clinseek.runner import read_results


def _samples(path: Path) -> list[Any]:
    from inspect_ai.log import read_eval_log

    return read_eval_log(str(path)).samples or []


def _f1(folder: Path) -> dict[tuple[str, str], float]:
    """(mode, qid) -> F1 by ``clinseek.score``."""
    return {(q.mode, q.qid): q.f1 for q in clinseek.score(folder).questions}


def _rows(folder: Path) -> dict[tuple[str, str], Any]:
    return {(r.mode, r.qid): r for path in sorted(folder.rglob("results.jsonl")) for r in read_results(path).rows}


def _records(row: Any) -> list[tuple[Any, ...]]:
    return [(t.turn, t.name, t.ok, t.error_kind, t.output_chars, t.truncated) for t in row.tools]


def _tool_texts(row: Any) -> list[tuple[str, str]]:
    return [(m["name"], m["content"]) for m in row.messages if m["role"] == "tool"]


def test_both_tasks_in_both_modes_score_as_clinseeks_runner(mock_runs: MockRuns, inspect_bench: Path) -> None:
    ours, theirs = _f1(mock_runs.inspect_runs), _f1(mock_runs.clinseek_runs)
    qids = {q.qid for q in load_questions(inspect_bench)}
    assert set(ours) == set(theirs) == {(mode, qid) for mode in ("agent", "curated") for qid in qids}
    assert ours == theirs
    assert {0.0, 1.0} < set(ours.values())  # right, wrong and partly right answers


def test_the_inspect_score_is_the_imported_runs_f1(mock_runs: MockRuns) -> None:
    imported = _f1(mock_runs.inspect_runs)
    for (_, mode), path in mock_runs.logs.items():
        for sample in _samples(path):
            score = sample.scores["clinseek_scorer"]
            assert score.value == pytest.approx(imported[(mode, str(sample.id))])
            assert set(score.metadata) >= {"f1", "precision", "recall", "exact_match"}


def test_samples_are_questions_with_their_ids_and_metadata(mock_runs: MockRuns, inspect_bench: Path) -> None:
    questions = {q.qid: q for q in load_questions(inspect_bench)}
    for (kind, _), path in mock_runs.logs.items():
        for sample in _samples(path):
            q = questions[str(sample.id)]
            assert (kind == "mm") == (q.task_type == "multimodal")
            assert sample.metadata["subject_id"] == q.subject_id and sample.metadata["task"] == q.task
            assert sample.metadata["prediction_time"] == q.prediction_time.isoformat(sep=" ")
            assert sample.metadata["category"] == q.category
            assert sample.target == list(q.label)
            shown = json.dumps([m.model_dump(mode="json") for m in sample.messages if m.role in ("system", "user")])
            assert "label" not in sample.metadata and sample.metadata["question_hash"] not in shown


def test_tool_outputs_are_the_direct_paths(mock_runs: MockRuns, inspect_bench: Path, synthetic_store: Path) -> None:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool

    from clinseek.inspect_tasks import inspect_name_map

    for (kind, mode), path in mock_runs.logs.items():
        if mode != "agent":
            continue
        for sample in _samples(path):
            calls = {c.id: c for m in sample.messages if isinstance(m, ChatMessageAssistant) for c in m.tool_calls or []}
            names = inspect_name_map([*(c.function.replace("__", ".") for c in calls.values())])
            with clinseek.open_question_episode(inspect_bench, str(sample.id), synthetic_store) as episode:
                for message in (m for m in sample.messages if isinstance(m, ChatMessageTool)):
                    call = calls[message.tool_call_id or ""]
                    reply = episode.call_tool(names.from_wire(call.function) or "", call.arguments)
                    shown = message.error.message if message.error else message.text
                    assert (reply.ok, reply.text) == (message.error is None, shown), (kind, sample.id, call.function)


def test_imported_rows_keep_the_runners_tool_outputs_and_answers(mock_runs: MockRuns) -> None:
    ours, theirs = _rows(mock_runs.inspect_runs), _rows(mock_runs.clinseek_runs)
    for key, row in ours.items():
        other = theirs[key]
        assert _tool_texts(row) == _tool_texts(other)
        assert _tool_texts(row) or row.mode == "curated"
        assert (row.status, row.answer, row.invalid_answer, row.stop_reason, row.completed, row.parse_mode) == (
            other.status, other.answer, other.invalid_answer, other.stop_reason, other.completed, other.parse_mode)
        assert (row.gold, row.candidates, row.question_hash, row.task_type, row.category) == (
            other.gold, other.candidates, other.question_hash, other.task_type, other.category)
        assert row.tool_calls == other.tool_calls and row.turns == other.turns
        assert _records(row) == _records(other)  # in the model's call order, as clinseek's loop records them
        assert row.model == "inspect:mockllm/model" and row.usage.input_tokens == 100 * row.turns


def test_an_imported_run_is_compared_reported_and_exported(mock_runs: MockRuns, tmp_path: Path) -> None:
    from clinseek.distill import ExportFilters, export_dataset
    from clinseek.scoring import compare_paths

    ours = next(mock_runs.inspect_runs.rglob("agent/*/results.jsonl")).parent
    theirs = next(p for p in mock_runs.clinseek_runs.rglob("agent/*/results.jsonl")
                  if p.parts[-4] == ours.parts[-3]).parent
    paired = compare_paths(ours, theirs, n_resamples=200)
    assert paired and all(g.delta == 0 for p in paired for g in p.groups)
    stats = clinseek.report([mock_runs.inspect_runs], tmp_path / "report.html")
    assert stats.runs == len(list(mock_runs.inspect_runs.rglob("results.jsonl")))
    exported = export_dataset([mock_runs.inspect_runs], tmp_path / "sft", ExportFilters(min_f1=0.0))
    assert exported.samples and all(s.teacher_model == "inspect:mockllm/model" for s in exported.samples)


def test_the_tools_have_inspect_names_and_clinseeks_schemas(synthetic_store: Path, inspect_bench: Path) -> None:
    from inspect_ai.tool import ToolDef

    from clinseek.inspect_tasks import episode_tools

    qid = next(q.qid for q in load_questions(inspect_bench) if q.task == "labevents")
    with clinseek.open_question_episode(inspect_bench, qid, synthetic_store) as episode:
        tools = episode_tools(episode)
        infos = episode.tools()
    assert all(isinstance(t, ToolDef) and re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", t.name) for t in tools)
    assert [t.name for t in tools] == [i.name.replace(".", "__") for i in infos]
    assert [t.description for t in tools] == [i.description for i in infos]
    for tool, info in zip(tools, infos, strict=True):
        schema = tool.parameters.model_dump(exclude_none=True)
        assert schema["properties"].keys() == info.parameters["properties"].keys()
        assert set(schema.get("required", [])) == set(info.parameters.get("required", []))


def test_an_import_refuses_another_tasks_log_and_an_existing_run(mock_runs: MockRuns, tmp_path: Path) -> None:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, get_model

    from clinseek.inspect_tasks import import_inspect_log

    log = next(iter(mock_runs.logs.values()))
    import_inspect_log(log, tmp_path / "runs")
    with pytest.raises(ClinseekError, match=r"already exists.*--overwrite"):
        import_inspect_log(log, tmp_path / "runs")
    assert import_inspect_log(log, tmp_path / "runs", overwrite=True)[0].rows > 0
    output = ModelOutput.from_content("mockllm/model", "hi")
    output.usage = None
    model = get_model("mockllm/model", custom_outputs=[_with_usage(output)])
    other = inspect_eval(Task(dataset=[Sample(input="hi", target="hi")]), model=model, log_dir=str(tmp_path / "logs"),
                         display="none")[0]
    with pytest.raises(ClinseekError, match="not a log of a clinseek task"):
        import_inspect_log(other.location, tmp_path / "other")
    with pytest.raises(ClinseekError, match="no such inspect log"):
        import_inspect_log(tmp_path / "nothing.eval", tmp_path / "other")


def _with_usage(output: Any) -> Any:
    from inspect_ai.model import ModelUsage

    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def test_a_sample_that_does_not_read_is_named_and_the_others_are_imported(mock_runs: MockRuns, tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    from clinseek.inspect_tasks import import_inspect_log

    log = read_eval_log(str(mock_runs.logs[("text", "agent")]))
    assert log.samples and len(log.samples) == 2
    bad = log.samples[0]
    bad.store["clinseek"] = {**bad.store["clinseek"], "status": "maybe"}
    write_eval_log(log, str(tmp_path / "edited.eval"))
    (run,) = import_inspect_log(tmp_path / "edited.eval", tmp_path / "runs")
    assert run.rows == 1 and len(run.unreadable) == 1
    assert run.unreadable[0].startswith(f"{bad.id} epoch 1: SampleOutcome field status:")
    assert [r.qid for r in read_results(run.results).rows] == [str(log.samples[1].id)]


@pytest.mark.parametrize("mode", ["agent", "curated"])
def test_the_solvers_blocking_work_waits_for_a_cpu_token(mode: str, inspect_bench: Path, synthetic_store: Path) -> None:
    """The question load, the episode, the answer vocabulary and a rendered package run on the event loop's CPU
    limiter (anyio's default threads are exhausted meanwhile); the sample is read as without the limiter."""
    import anyio
    from inspect_ai.model import ModelName, ModelOutput
    from inspect_ai.solver import TaskState

    from _cpu_limit import on_the_cpu_limiter
    from clinseek.inspect_tasks import STORE_KEY, clinseek_agent, clinseek_curated

    question = next(q for q in load_questions(inspect_bench) if q.task == "Inpatient_Mortality")
    make = clinseek_agent if mode == "agent" else clinseek_curated
    solve = make(bench=str(inspect_bench), store=str(synthetic_store))
    state = TaskState(ModelName("mockllm/model"), question.qid, 1, "", [])

    async def generate(state: TaskState, **_: Any) -> TaskState:  # answers in text: no tool call
        state.output = ModelOutput.from_content("mockllm/model", "<answer>\nno\n</answer>")
        state.messages.append(state.output.message)
        return state

    done = anyio.run(on_the_cpu_limiter, lambda: solve(state, generate))  # type: ignore[arg-type]
    outcome = done.store.get(STORE_KEY)
    assert (outcome["status"], outcome["answer"]) == ("answered", ["no"])
