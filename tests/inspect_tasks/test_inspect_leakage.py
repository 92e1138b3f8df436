"""The leakage audit's refusals hold through the inspect tools: a model under inspect that asks for another
patient, a later time, or SQL that writes is refused with the direct path's text (an inspect tool error),
sees no row of another patient or of the future, and the sample goes on to its answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _inspect_helpers import Step, mock_outputs

import clinseek
from clinseek.bench import Question, load_questions
from clinseek.runner import read_results


def _attacks(question: Question) -> tuple[list[Step], dict[str, str | None]]:
    """One turn of attacks on ``question``'s episode, and the error kind each call must get (None: runs)."""
    other, cutoff = question.subject_id + 1, question.prediction_time.isoformat(sep=" ")
    calls: list[tuple[str, dict[str, Any], str | None]] = [
        ("ehr.load_ehr", {"subject_id": other}, "pinned"),
        ("ehr.load_ehr", {"timestamp": "2199-01-01 00:00:00"}, "pinned"),
        ("ehr.get_latest_records", {"table_name": "hosp.labevents", "subject_id": str(other)}, "pinned"),
        ("ehr.run_sql_query", {"sql_query": "DELETE FROM hosp.labevents"}, "read_only"),
        ("ehr.run_sql_query", {"sql_query": "DROP TABLE hosp.patients"}, "read_only"),
        ("ehr.run_sql_query", {"sql_query": "SELECT 1 AS n; UPDATE hosp.patients SET dod = NULL"}, "one_statement"),
        # asked without an argument to refuse: the episode holds no other patient and no later row
        ("ehr.run_sql_query", {"sql_query": f"SELECT count(*) AS n FROM hosp.admissions WHERE subject_id <> "
                                            f"{question.subject_id}"}, None),
        ("ehr.run_sql_query", {"sql_query": f"SELECT count(*) AS n FROM hosp.labevents WHERE charttime >= "
                                            f"TIMESTAMP '{cutoff}'"}, None),
    ]
    return [[(name, args) for name, args, _ in calls]], {f"call_0_{i}": kind for i, (*_, kind) in enumerate(calls)}


def test_refusals_hold_through_the_inspect_tools(synthetic_store: Path, inspect_bench: Path, tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, get_model

    from clinseek.inspect_tasks import clinseek_text, import_inspect_log, inspect_name_map

    question = next(q for q in load_questions(inspect_bench) if q.task == "Inpatient_Mortality")
    steps, expected = _attacks(question)
    task = clinseek_text(bench=str(inspect_bench), store=str(synthetic_store), tasks="Inpatient_Mortality")
    log = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=mock_outputs(steps)),
                       log_dir=str(tmp_path / "logs"), display="none")[0]
    assert log.status == "success" and log.samples and len(log.samples) == 1
    sample = log.samples[0]
    calls = {c.id: c for m in sample.messages if isinstance(m, ChatMessageAssistant) for c in m.tool_calls or []}
    shown = {m.tool_call_id: m for m in sample.messages if isinstance(m, ChatMessageTool)}
    assert set(expected) <= set(shown)
    names = inspect_name_map(["ehr.load_ehr", "ehr.get_latest_records", "ehr.run_sql_query"])
    with clinseek.open_question_episode(inspect_bench, question.qid, synthetic_store) as episode:
        for call_id, kind in expected.items():
            call, message = calls[call_id], shown[call_id]
            direct = episode.call_tool(names.from_wire(call.function) or "", call.arguments)
            assert direct.result.error_kind == kind, (call.function, call.arguments, direct.text)
            if kind is None:
                assert message.error is None and message.text == direct.text
                assert direct.result.data["rows"] == [[0]]
            else:
                assert message.error is not None and message.error.message == direct.text, call.arguments
                assert f"({kind})" in message.error.message
    assert str(question.subject_id + 1) not in "".join(m.text for m in shown.values() if m.error is None)

    imported = import_inspect_log(log.location, tmp_path / "runs")[0]
    row = read_results(imported.results).rows[0]
    assert (row.status, row.stop_reason, row.answer) == ("answered", "finish_tool_call", ["no"])
    refused = [r.error_kind for r in row.tools if r.name != "ehr.finish"]
    assert refused == list(expected.values())
