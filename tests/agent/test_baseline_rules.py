"""The documented rules of the offline baselines (pure functions) and their prompt reading."""

from __future__ import annotations

import datetime as dt

import anyio
from _agent_helpers import make_question

from clinseek.agent import (
    NullBaseline,
    agent_messages_text,
    parse_table,
    rank_candidates,
    read_prompt,
    risk_points,
    risk_threshold,
)
from clinseek.models import Message, get_model

WHEN = dt.datetime(2150, 3, 4, 5, 6, 7)


def _messages(**kw) -> list[Message]:
    system, user = agent_messages_text(make_question(42, WHEN, **kw))
    return [Message.system(system), Message.user(user)]


def test_prompt_facts_are_read_from_the_tagged_blocks() -> None:
    facts = read_prompt(_messages())
    assert facts.subject_id == 42 and facts.prediction_time == WHEN
    assert facts.candidates == ("yes", "no") and facts.is_yes_no


def test_baselines_are_registered_providers() -> None:
    assert get_model("baseline:null").name == "baseline:null"
    assert get_model("baseline:evidence").name == "baseline:evidence"


def test_null_answers_no_or_nothing() -> None:
    model = NullBaseline()
    risk = anyio.run(lambda: model.generate(_messages(), [{"type": "function", "function": {"name": "ehr.finish"}}]))
    assert risk.message.tool_calls[0].arguments == {"response": ["no"]}
    decision = _messages(task="labevents", task_type="decision_making", candidates=["Glucose"], label=["Glucose"])
    curated = anyio.run(lambda: model.generate(decision, []))
    assert curated.message.content == "<answer>\n</answer>"
    assert risk.cost_usd == 0 and risk.usage.total_tokens == 0


def test_ranking_prefers_frequent_recent_exact_then_fuzzy_matches() -> None:
    history = [("Glucose", 5.0), ("Sodium", 9.0), ("sodium", 1.0), ("Potassium, Whole Blood", 2.0), ("Other", 99.0)]
    candidates = ["Glucose", "Sodium", "Potassium Whole Blood", "Chloride"]
    assert rank_candidates(history, candidates, 3) == ["Sodium", "Glucose", "Potassium Whole Blood"]
    assert rank_candidates(history, candidates, 1) == ["Sodium"]


def test_risk_points_follow_the_documented_rules() -> None:
    assert risk_points({}) == 0
    sick = {"age": 80, "admissions": 3, "icu_stays": 1, "abnormal_labs_48h": 20, "acuity": 1, "pressors": 1}
    assert risk_points(sick) == 2 + 1 + 1 + 2 + 2 + 2
    assert risk_points({"age": 66, "abnormal_labs_48h": 5, "acuity": 2}) == 3
    assert risk_threshold("mortality") == 5 and risk_threshold(None) == 4


def test_rendered_query_results_are_parsed_with_escaped_pipes() -> None:
    content = "cand_name|cand_n|cand_latest\nA\\|B|3|1\nC|1|0"
    assert parse_table(content) == [{"cand_name": "A|B", "cand_n": "3", "cand_latest": "1"},
                                    {"cand_name": "C", "cand_n": "1", "cand_latest": "0"}]
    assert parse_table("No rows.") == [] and parse_table("The query ran and returned no rows.") == []


def test_columns_listed_once_come_back_in_every_row() -> None:
    content = ("Note: read as SQLite and run as DuckDB (ifnull -> coalesce).\nsame in all rows shown: unit=mg/dL, k=2\n"
               "NULL in all rows shown: last\nname|n\nA|3\nB|1\n[TRUNCATED: showing the first 2 of 9 rows]")
    assert parse_table(content) == [{"unit": "mg/dL", "k": "2", "last": "", "name": "A", "n": "3"},
                                    {"unit": "mg/dL", "k": "2", "last": "", "name": "B", "n": "1"}]


def test_rendered_results_parse_back_to_their_rows() -> None:
    from clinseek.tools import Limits, Rows, render_rows

    rows = [(f"x{i}", i, "same", None) for i in range(40)]
    text, _ = render_rows(None, Rows(("name", "n", "unit", "gone"), rows, 40, False), Limits(), narrow="")
    assert parse_table(text) == [{"name": f"x{i}", "n": str(i), "unit": "same", "gone": ""} for i in range(40)]


def test_times_shown_as_their_time_of_day_parse_back_with_their_date() -> None:
    import datetime as dt

    from clinseek.tools import Limits, Rows, render_rows

    times = [dt.datetime(2150, 1, 2, 3, 4), dt.datetime(2150, 1, 2, 9, 30, 15), None, dt.datetime(2150, 1, 2, 23, 0),
             dt.datetime(2150, 1, 3)]
    rows = [(t, i) for i, t in enumerate(times)]
    text, _ = render_rows(None, Rows(("t", "n"), rows, 5, False), Limits(), narrow="")
    assert "\n09:30:15|1\n" in text
    assert [r["t"] for r in parse_table(text)] == ["" if t is None else t.isoformat(sep=" ") for t in times]
