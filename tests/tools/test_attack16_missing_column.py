"""attack16reach: a qualified column a table lacks, inside a subquery, makes DuckDB say the *table* is not found.

EHRSQL 2024's own schema has ``procedures_icd.charttime``, ``diagnoses_icd.charttime`` and ``admissions.age``;
MIMIC-IV's has not. Of the 592 EHRSQL 2024 valid questions naming one demo patient, 12 ran into
``Binder Error: Referenced table "procedures_icd" not found!`` (or ``admissions``, ``diagnoses_icd``) through
``ehr.run_sql_query``, although the episode holds the table: a model reading that looks for another table.
The answer should name the column that is not there and the table's columns.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

import clinseek


def _patient(store: Path) -> tuple[int, str]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        subject_id, last = con.execute(
            "SELECT subject_id, max(dischtime) FROM hosp.admissions GROUP BY 1 ORDER BY 1 LIMIT 1").fetchone()
    finally:
        con.close()
    return subject_id, str(last)


def test_a_column_the_table_lacks_is_named_not_a_missing_table(synthetic_store: Path) -> None:
    subject_id, cutoff = _patient(synthetic_store)
    sql = ("SELECT d_icd_procedures.long_title FROM d_icd_procedures WHERE d_icd_procedures.icd_code IN ( "
           "SELECT T1.icd_code FROM ( SELECT procedures_icd.icd_code, COUNT( procedures_icd.charttime ) AS C1 "
           "FROM procedures_icd WHERE procedures_icd.hadm_id IN ( SELECT admissions.hadm_id FROM admissions "
           f"WHERE admissions.subject_id = {subject_id} ) GROUP BY procedures_icd.icd_code ) AS T1 WHERE T1.C1 = 2 )")
    with clinseek.open_episode(synthetic_store, subject_id, cutoff) as episode:
        reply = episode.call_tool("ehr.run_sql_query", {"sql_query": sql})
    assert reply.result.error_kind == "sql_error"
    assert "procedures_icd.charttime is not a column of hosp.procedures_icd" in reply.text, reply.text
    assert "chartdate" in reply.text  # its columns are listed


def test_a_table_the_query_does_not_read_keeps_duckdbs_message(synthetic_store: Path) -> None:
    subject_id, cutoff = _patient(synthetic_store)
    with clinseek.open_episode(synthetic_store, subject_id, cutoff) as episode:
        reply = episode.call_tool("ehr.run_sql_query", {"sql_query": "SELECT nosuch.x FROM admissions"})
    assert reply.result.error_kind == "sql_error" and "is not a column of" not in reply.text, reply.text


def test_a_misspelled_column_keeps_duckdbs_candidates(synthetic_store: Path) -> None:
    """newcomer20: the answer kept DuckDB's first line only, without the closest names it goes on to give."""
    subject_id, cutoff = _patient(synthetic_store)
    with clinseek.open_episode(synthetic_store, subject_id, cutoff) as episode:
        column = episode.call_tool("ehr.run_sql_query", {"sql_query": "SELECT valuenm FROM labevents"})
        alias = episode.call_tool("ehr.run_sql_query", {"sql_query": "SELECT x.valuenum FROM labevents l"})
    assert column.result.error_kind == "sql_error"
    assert 'not found in FROM clause! Candidate bindings: "valuenum"' in column.text, column.text
    assert 'Candidate tables: "l"' in alias.text, alias.text
    assert "LINE 1" not in column.text + alias.text  # not the echo of the query


def test_a_syntax_error_names_the_token_at_fault(synthetic_store: Path) -> None:
    """newcomer20: ``SELEC * FROM labevents`` answered sqlglot's "Required keyword: 'expression' missing for Mul";
    DuckDB's parser names the token and shows where."""
    subject_id, cutoff = _patient(synthetic_store)
    with clinseek.open_episode(synthetic_store, subject_id, cutoff) as episode:
        reply = episode.call_tool("ehr.run_sql_query", {"sql_query": "SELEC * FROM labevents"})
    assert reply.result.error_kind == "sql_syntax"
    assert 'syntax error at or near "SELEC"' in reply.text and "LINE 1: SELEC * FROM labevents" in reply.text
    assert "Mul" not in reply.text, reply.text


def test_deep_nesting_never_reaches_duckdbs_parser() -> None:
    """attack20: DuckDB's parse of a deeply nested text holds the interpreter lock for minutes (20,000 brackets),
    stalling every thread of the process; the parser's words are asked for shallow, short texts only."""
    from clinseek.episode import duckdb_syntax_error
    from clinseek.episode._clock import PARSER_MAX_CHARS, PARSER_MAX_DEPTH

    shallow = "SELECT lambda x: " + "(" * PARSER_MAX_DEPTH + "1 }"
    assert duckdb_syntax_error(shallow) is not None
    for sql in ("SELECT lambda x: " + "(" * (PARSER_MAX_DEPTH + 1) + "1 }",
                "SELECT lambda x: " + "(" * 19_970 + "1 }",
                "SELEC " + "1 + " * PARSER_MAX_CHARS):
        assert duckdb_syntax_error(sql) is None


# newcomer20: a misspelled table name got the list of every table but no suggestion (task names got one).
@pytest.mark.parametrize(("tool", "args"), [
    ("ehr.run_sql_query", {"sql_query": "SELECT * FROM labevent"}),
    ("ehr.get_latest_records", {"table_name": "labevent"}),
    ("ehr.get_records_by_time", {"table_name": "hosp.labevent", "start_time": "2100-01-01 00:00:00",
                                 "end_time": "2200-01-01 00:00:00"}),
])
def test_a_misspelled_table_gets_the_closest_name(synthetic_store: Path, tool: str, args: dict[str, str]) -> None:
    subject_id, cutoff = _patient(synthetic_store)
    with clinseek.open_episode(synthetic_store, subject_id, cutoff) as episode:
        reply = episode.call_tool(tool, args)
        unrelated = episode.call_tool(tool, {**args, **{k: v.replace("labevent", "zzqqx") for k, v in args.items()}})
    assert reply.result.error_kind == "unknown_table"
    assert "(did you mean 'labevents'?); available: " in reply.text, reply.text
    assert unrelated.result.error_kind == "unknown_table" and "did you mean" not in unrelated.text, unrelated.text
