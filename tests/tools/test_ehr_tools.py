"""Every EHR tool on real sealed episodes (the ingested MIMIC-IV demo and the synthetic store)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import anyio
import pytest
from _tool_attacks import REFUSED, SLOW
from _tool_cases import Case

from clinseek.tools import Limits, ToolContext, ToolResult, call_tool


def run(ep: Any, name: str, limits: Limits | None = None, **args: Any) -> ToolResult:
    ctx = ToolContext(ep, limits or Limits())
    return anyio.run(call_tool, ctx, name, args)


def sql(ep: Any, query: str) -> list[tuple[Any, ...]]:
    return ep.execute(query, max_rows=100_000).rows


def test_load_ehr_lists_every_visible_table_with_its_rows(episode: Any, case: Case) -> None:
    result = run(episode, "ehr.load_ehr")
    assert result.ok
    assert result.data["subject_id"] == case.subject_id
    assert result.data["tables"] == episode.table_counts()
    assert result.data["candidate_tables"] == {"candidates.diagnoses_ccs_candidates": 5}
    assert f"- hosp.labevents: {episode.table_counts()['hosp.labevents']}" in result.content


def test_load_ehr_accepts_its_own_key_and_refuses_others(episode: Any, case: Case) -> None:
    same = run(
        episode,
        "ehr.load_ehr",
        subject_id=str(case.subject_id),
        timestamp=case.prediction_time.isoformat(sep=" "),
    )
    assert same.ok
    other = run(episode, "ehr.load_ehr", subject_id=case.subject_id + 1)
    assert (other.ok, other.error_kind) == (False, "pinned")
    assert str(case.subject_id) in other.content
    later = run(episode, "ehr.load_ehr", timestamp=str(case.prediction_time + dt.timedelta(days=1)))
    assert later.error_kind == "pinned"
    elsewhere = run(episode, "ehr.get_latest_records", table_name="labevents", subject_id=case.subject_id + 1)
    assert elsewhere.error_kind == "pinned"


def test_get_table_names(episode: Any) -> None:
    result = run(episode, "ehr.get_table_names")
    assert "hosp.labevents" in result.data["tables"]
    assert result.data["candidate_tables"] == ["candidates.diagnoses_ccs_candidates"]
    assert not any(t.startswith("cxr.chexpert") for t in result.data["tables"])


def test_get_column_names_includes_dictionary_labels(episode: Any) -> None:
    labs = run(episode, "ehr.get_column_names", table_name="labevents")
    assert labs.data["table"] == "hosp.labevents"
    assert {"itemid", "valuenum", "label", "fluid", "category"} <= set(labs.data["columns"])
    assert run(episode, "ehr.get_column_names", table_name="hosp.labevents").data == labs.data
    dx = run(episode, "ehr.get_column_names", table_name="diagnoses_icd")
    assert {"long_title", "event_time"} <= set(dx.data["columns"])
    cand = run(episode, "ehr.get_column_names", table_name="diagnoses_ccs_candidates")
    assert cand.data["columns"] == ["candidate"]


def test_unknown_table_is_a_structured_error_listing_tables(episode: Any) -> None:
    result = run(episode, "ehr.get_column_names", table_name="labevents_v2")
    assert (result.ok, result.error_kind) == (False, "unknown_table")
    assert "hosp.labevents" in result.content
    hidden = run(episode, "ehr.get_column_names", table_name="cxr.chexpert")
    assert hidden.error_kind == "unknown_table"


def test_get_table_description(episode: Any) -> None:
    result = run(episode, "ehr.get_table_description", table_name="labevents")
    assert result.ok and "hosp.labevents" in result.content and "valuenum" in result.content
    cand = run(episode, "ehr.get_table_description", table_name="candidates.diagnoses_ccs_candidates")
    assert cand.ok and "candidate" in cand.content


def test_get_unique_values_counts_rows(episode: Any) -> None:
    result = run(episode, "ehr.get_unique_values", table_name="labevents", column_name="label")
    assert result.ok
    counted = sum(r[1] for r in result.data["rows"])
    expected = sql(episode, "SELECT count(*) FROM hosp.labevents l JOIN hosp.d_labitems d USING (itemid)")[0][
        0
    ]
    if not result.truncated:
        assert counted == expected
    capped = run(
        episode,
        "ehr.get_unique_values",
        Limits(max_unique_values=2),
        table_name="labevents",
        column_name="itemid",
    )
    assert capped.truncated and "[TRUNCATED: showing the first 2 of" in capped.content
    bad = run(episode, "ehr.get_unique_values", table_name="labevents", column_name="nope")
    assert bad.error_kind == "unknown_column"


def test_records_by_time_uses_a_half_open_window(episode: Any, case: Case) -> None:
    day = (case.prediction_time - dt.timedelta(days=1)).date()
    result = run(
        episode,
        "ehr.get_records_by_time",
        Limits(max_rows=100_000),
        table_name="labevents",
        start_time=str(day),
        end_time=str(day),
    )
    expected = sql(
        episode,
        f"SELECT count(*) FROM hosp.labevents WHERE charttime >= '{day}' AND charttime < DATE '{day}' + 1",
    )[0][0]
    assert result.ok and result.data["row_count"] == expected == len(result.data["rows"])
    times = [r[result.data["columns"].index("charttime")] for r in result.data["rows"]]
    assert times == sorted(times)
    at = dt.datetime.combine(day, dt.time(12))
    morning = run(
        episode,
        "ehr.get_records_by_time",
        Limits(max_rows=100_000),
        table_name="labevents",
        start_time=str(day),
        end_time=at.isoformat(sep=" "),
    )
    assert all(t < at for t in (r[result.data["columns"].index("charttime")] for r in morning.data["rows"]))


def test_records_by_time_caps_rows_and_says_how_to_narrow(episode: Any) -> None:
    total = episode.table_counts()["hosp.labevents"]
    result = run(
        episode,
        "ehr.get_records_by_time",
        Limits(max_rows=3),
        table_name="labevents",
        start_time="1900-01-01",
        end_time="2300-01-01",
    )
    assert result.truncated and len(result.data["rows"]) == 3 and result.data["row_count"] == total
    assert f"showing the first 3 of {total} rows" in result.content
    assert "start_time/end_time" in result.content


def test_records_by_time_errors(episode: Any) -> None:
    assert (
        run(
            episode,
            "ehr.get_records_by_time",
            table_name="patients",
            start_time="1900-01-01",
            end_time="2300-01-01",
        ).error_kind
        == "no_time"
    )
    assert (
        run(
            episode,
            "ehr.get_records_by_time",
            table_name="labevents",
            start_time="yesterday",
            end_time="2300-01-01",
        ).error_kind
        == "bad_argument"
    )
    assert (
        run(
            episode,
            "ehr.get_records_by_time",
            table_name="labevents",
            start_time="2150-01-02",
            end_time="2150-01-01",
        ).error_kind
        == "bad_argument"
    )
    assert (
        run(
            episode,
            "ehr.get_records_by_time",
            table_name="diagnoses_ccs_candidates",
            start_time="2150-01-01",
            end_time="2150-01-02",
        ).error_kind
        == "wrong_table_kind"
    )


def test_event_counts_cover_every_visible_row(episode: Any, case: Case) -> None:
    before = run(
        episode,
        "ehr.get_event_counts_by_time",
        start_time="1800-01-01",
        end_time=case.prediction_time.isoformat(sep=" "),
    )
    counts = episode.table_counts()
    for table, n in before.data["counts"].items():
        assert n == counts[table], table
    after = run(
        episode,
        "ehr.get_event_counts_by_time",
        start_time=case.prediction_time.isoformat(sep=" "),
        end_time="2400-01-01",
    )
    assert sum(after.data["counts"].values()) == 0
    assert "nothing there is visible" in after.content


def test_latest_records_share_the_latest_time(episode: Any) -> None:
    result = run(episode, "ehr.get_latest_records", table_name="labevents")
    latest = sql(episode, "SELECT max(charttime) FROM hosp.labevents")[0][0]
    col = result.data["columns"].index("charttime")
    assert result.data["rows"] and {r[col] for r in result.data["rows"]} == {latest}


def test_keyword_search_is_literal_and_case_insensitive(episode: Any) -> None:
    lower = run(episode, "ehr.get_records_by_keyword", table_name="d_labitems", keyword="creatinine")
    upper = run(episode, "ehr.get_records_by_keyword", table_name="d_labitems", keyword="CREATININE")
    assert lower.ok and lower.data["rows"] == upper.data["rows"] and lower.data["rows"]
    regexish = run(episode, "ehr.get_records_by_keyword", table_name="labevents", keyword="(+[")
    assert regexish.ok and regexish.data["rows"] == []
    dot = run(episode, "ehr.get_records_by_keyword", table_name="d_labitems", keyword=".*")
    assert all(".*" in "|".join(map(str, r)) for r in dot.data["rows"])


def test_value_search_is_typed(episode: Any) -> None:
    itemid = sql(episode, "SELECT itemid FROM hosp.labevents GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")[0][0]
    n = sql(episode, f"SELECT count(*) FROM hosp.labevents WHERE itemid = {itemid}")[0][0]
    result = run(
        episode,
        "ehr.get_records_by_value",
        Limits(max_rows=100_000),
        table_name="labevents",
        column_name="itemid",
        value=f" {itemid} ",
    )
    assert result.data["row_count"] == n
    label = run(
        episode,
        "ehr.get_records_by_value",
        Limits(max_rows=100_000),
        table_name="labevents",
        column_name="label",
        value=result.data["rows"][0][result.data["columns"].index("label")],
    )
    assert label.data["row_count"] >= n
    bad = run(episode, "ehr.get_records_by_value", table_name="labevents", column_name="itemid", value="abc")
    assert bad.error_kind == "bad_argument"


def test_sql_is_typed_and_table_names_work_bare_or_qualified(episode: Any) -> None:
    bare = run(
        episode, "ehr.run_sql_query", sql_query="SELECT count(*) AS n FROM labevents WHERE valuenum > 5"
    )
    qual = run(
        episode, "ehr.run_sql_query", sql_query="SELECT count(*) AS n FROM hosp.labevents WHERE valuenum > 5"
    )
    assert bare.ok and bare.data["rows"] == qual.data["rows"]
    assert isinstance(bare.data["rows"][0][0], int)
    cand = run(episode, "ehr.run_sql_query", sql_query="SELECT count(*) FROM diagnoses_ccs_candidates")
    assert cand.data["rows"] == [[5]]


def test_sql_row_cap_and_errors(episode: Any) -> None:
    capped = run(episode, "ehr.run_sql_query", Limits(max_rows=2), sql_query="SELECT * FROM labevents")
    assert capped.truncated and len(capped.data["rows"]) == 2 and "LIMIT/OFFSET" in capped.content
    wrong = run(episode, "ehr.run_sql_query", sql_query="SELECT no_such_column FROM labevents")
    assert (wrong.ok, wrong.error_kind) == (False, "sql_error")
    empty = run(episode, "ehr.run_sql_query", sql_query="SELECT * FROM labevents WHERE 1 = 0")
    assert empty.ok and empty.data["rows"] == []


@pytest.mark.parametrize(("query", "kinds"), REFUSED, ids=[q for q, _ in REFUSED])
def test_adversarial_sql_is_refused_on_a_real_episode(episode: Any, query: str, kinds: str) -> None:
    result = run(episode, "ehr.run_sql_query", sql_query=query)
    assert not result.ok and result.error_kind in kinds.split("|"), result.content


def test_slow_sql_is_stopped_within_the_time_limit(episode: Any) -> None:
    limits = Limits(sql_timeout_s=0.5)
    for query in SLOW:
        result = run(episode, "ehr.run_sql_query", limits, sql_query=query)
        assert not result.ok and result.error_kind in ("timeout", "sql_error"), (query, result.content)


def test_nothing_escaped_after_the_attacks(episode: Any, case: Case) -> None:
    for query, _ in REFUSED:
        run(episode, "ehr.run_sql_query", sql_query=query)
    assert not Path("/tmp/clinseek_leak.csv").exists()
    assert not Path("/tmp/clinseek_evil.duckdb").exists()
    assert sql(episode, "SELECT DISTINCT subject_id FROM hosp.patients") == [(case.subject_id,)]
    assert "hosp.labevents" in episode.table_counts()


def test_candidate_keyword_is_literal(episode: Any) -> None:
    result = run(
        episode, "ehr.get_candidates_by_keyword", table_name="diagnoses_ccs_candidates", keyword="(EXCEPT"
    )
    assert [r[0] for r in result.data["rows"]] == [
        "Pneumonia (except that caused by tuberculosis or sexually transmitted disease)",
        "Septicemia (except in labor)",
    ]
    ehr = run(episode, "ehr.get_candidates_by_keyword", table_name="labevents", keyword="x")
    assert ehr.error_kind == "wrong_table_kind"


def test_candidate_fuzzy_ranks_and_thresholds(episode: Any) -> None:
    result = run(
        episode,
        "ehr.get_candidates_by_fuzzy_matching",
        table_name="diagnoses_ccs_candidates",
        keywords=["congestive heart failure", "zzzzqqq"],
    )
    hits = result.data["results"]
    assert hits["congestive heart failure"][0][0] == "Congestive heart failure; nonhypertensive"
    assert hits["zzzzqqq"] == [] and "(no match)" in result.content
    single = run(
        episode,
        "ehr.get_candidates_by_fuzzy_matching",
        table_name="diagnoses_ccs_candidates",
        keywords="renal failure",
    )
    assert single.data["results"]["renal failure"][0][0] == "Acute renal failure"


def test_semantic_search_needs_a_model_path_and_the_extra(episode: Any) -> None:
    off = run(
        episode,
        "ehr.get_candidates_by_semantic_similarity",
        table_name="diagnoses_ccs_candidates",
        query="heart",
    )
    assert off.error_kind == "not_enabled" and "clinseek[semantic]" in off.content
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        missing = run(
            episode,
            "ehr.get_candidates_by_semantic_similarity",
            Limits(semantic_model_path="/nonexistent/model"),
            table_name="diagnoses_ccs_candidates",
            query="heart",
        )
        assert missing.error_kind == "missing_extra" and "clinseek[semantic]" in missing.content


def test_semantic_search_ranks_by_cosine(episode: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    import clinseek.tools._ehr_candidates as cand

    vocab = ["heart", "renal", "pneumonia", "sepsis", "septicemia", "hypertension", "failure", "kidney"]

    def encode(texts: list[str]) -> Any:  # bag of words: the real model cannot run offline here
        m = np.array([[float(w in t.lower()) for w in vocab] for t in texts]) + 1e-9
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    monkeypatch.setattr(cand, "load_encoder", lambda path: encode)
    cand._embed_candidates.cache_clear()
    result = run(
        episode,
        "ehr.get_candidates_by_semantic_similarity",
        Limits(semantic_model_path="/m"),
        table_name="diagnoses_ccs_candidates",
        query=["heart failure", "kidney"],
    )
    assert result.data["results"]["heart failure"][0][0] == "Congestive heart failure; nonhypertensive"
    assert result.data["results"]["kidney"] == []
    cand._embed_candidates.cache_clear()


def test_think_and_finish_record_state(episode: Any) -> None:
    ctx = ToolContext(episode)
    thought = anyio.run(call_tool, ctx, "ehr.think", {"response": "check creatinine"})
    done = anyio.run(call_tool, ctx, "ehr.finish", {"response": ["Acute renal failure"]})
    single = anyio.run(call_tool, ctx, "ehr.finish", {"response": "Yes"})
    assert thought.ok and ctx.state["thoughts"] == ["check creatinine"]
    assert done.data["answer"] == ["Acute renal failure"]
    assert single.data["answer"] == ["Yes"] == ctx.state["answer"]


def test_latest_records_are_the_same_once_the_time_index_is_read(episode: Any) -> None:
    ctx = ToolContext(episode)
    args = {"table_name": "labevents"}
    before = anyio.run(call_tool, ctx, "ehr.get_latest_records", args)
    anyio.run(
        call_tool, ctx, "ehr.get_event_counts_by_time", {"start_time": "1900-01-01", "end_time": "2400-01-01"}
    )
    after = anyio.run(call_tool, ctx, "ehr.get_latest_records", args)
    assert before.data == after.data and before.data["rows"]
