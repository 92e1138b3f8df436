"""The store's row instants (reserved columns written at ingest): never shown, and only used while valid.

The instant columns (``clinseek.store.INSTANT_PREFIX``) are in the store tables themselves; the policy reads
them to decide rows and values, and nothing of them may reach an episode: not the sealed database's catalog,
not a ``SELECT *`` through ``ehr.run_sql_query``, not the ``ehr.*`` schema listings, not Curated Input, not
the future rows of label building. A store changed since its instants were written (row counts), or whose
record does not match this registry, is read with the policy's joins (the same rows: the oracle tests).
"""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import duckdb

from clinseek.bench._curated import render_text_timeline
from clinseek.episode import build_episode, open_store_reader
from clinseek.policy import MM_POLICY, EpisodeKey, get_policy
from clinseek.schema import get_table, tables
from clinseek.store import INSTANT_PREFIX, ROW_INSTANTS, write_event_index
from clinseek.tools import Limits, ToolContext, call_tool

from .crafted import OTHER, STUDY_AT_T, S, T


def _reserved(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    return con.execute(
        "SELECT table_name, column_name FROM duckdb_columns() WHERE starts_with(column_name, ?)", [INSTANT_PREFIX]
    ).fetchall()


def test_no_registry_column_has_the_reserved_prefix() -> None:
    assert not [c.name for t in tables() for c in t.columns if c.name.lower().startswith(INSTANT_PREFIX)]


def test_row_instants_never_reach_an_episode(crafted_store: Path) -> None:
    key = EpisodeKey(S, T, MM_POLICY, study_ids=(STUDY_AT_T,))
    with duckdb.connect(str(crafted_store), read_only=True) as con:
        assert _reserved(con), "the crafted store keeps row instants (written with its event index)"
    with open_store_reader(crafted_store) as reader:
        assert {"hosp.diagnoses_icd", "hosp.emar_detail", "hosp.poe"} <= set(reader.instants)
        with build_episode(reader, key) as ep:
            # the visible tables whose store rows carry instant columns (every other table reads none)
            names = [n for n, rows in ep.table_counts().items() if rows and n in reader.instants]
            # (hosp.emar / emar_detail: none visible at T since session 16, the administration is documented after T)
            # labs / micro: their renumbered id and collapse (_clinseek_renumber_*, _clinseek_kept_*, session 18)
            assert {"hosp.diagnoses_icd", "hosp.poe", "cxr.reports", "hosp.labevents", "hosp.microbiologyevents"} <= set(
                names
            )
            shown: list[str] = []
            for name in names:
                shown.append(" ".join(ep.execute(f"SELECT * FROM {name}").columns))
                shown.append(" ".join(ep.timeline_rows(name).columns))
            assert ep._con is not None  # the sealed database's own catalog, every table loaded above
            shown += [c for (c,) in ep._con.execute("SELECT column_name FROM duckdb_columns()").fetchall()]
            ctx = ToolContext(ep, Limits())
            calls: list[tuple[str, dict[str, Any]]] = [
                ("ehr.load_ehr", {}),
                ("ehr.get_table_names", {}),
                ("ehr.get_event_counts_by_time", {"start_time": "1900-01-01", "end_time": "2400-01-01"}),
            ]
            for name in names:
                calls += [
                    ("ehr.get_column_names", {"table_name": name}),
                    ("ehr.run_sql_query", {"sql_query": f"SELECT * FROM {name}"}),
                ]
            calls += [("ehr.get_table_description", {"table_name": "hosp.emar_detail"}),
                      ("ehr.get_latest_records", {"table_name": "hosp.emar_detail"})]
            for tool, args in calls:
                result = anyio.run(call_tool, ctx, tool, args)
                shown.append(result.content)
                shown.append(repr(result.data))
            shown.append(render_text_timeline(ep, budget_tokens=16_000).text)
    policy = get_policy(key.policy)
    with duckdb.connect(str(crafted_store), read_only=True) as con:
        for table in tables():
            future = policy.future_select(table, key, present=reader.present)
            if future is not None:
                shown.append(" ".join(d[0] for d in con.execute(future[0], future[1]).description))
    assert not [text for text in shown if INSTANT_PREFIX in text.lower()]


def test_a_store_changed_since_ingest_is_read_without_its_instants(crafted_store: Path, tmp_path: Path) -> None:
    key = EpisodeKey(S, T + timedelta(days=2))
    copy = tmp_path / "changed.duckdb"
    shutil.copy(crafted_store, copy)
    with open_store_reader(copy) as reader, build_episode(reader, key) as ep:
        assert reader.instants
        before = {n: sorted(map(repr, ep.execute(f"SELECT * FROM {n}", max_rows=10**5).rows)) for n in ep.table_counts()}
    with duckdb.connect(str(copy)) as con:  # a row removed by hand: the recorded counts no longer hold
        assert con.execute("DELETE FROM hosp.admissions WHERE subject_id = ?", [OTHER]).fetchall()[0][0] > 0
    with open_store_reader(copy) as reader:
        assert reader.instants == {} and reader.indexed == frozenset()
    with duckdb.connect(str(copy)) as con:  # re-indexed: instants again, the same rows
        write_event_index(con)
    with open_store_reader(copy) as reader, build_episode(reader, key) as ep:
        assert reader.instants
        after = {n: sorted(map(repr, ep.execute(f"SELECT * FROM {n}", max_rows=10**5).rows)) for n in ep.table_counts()}
    assert after == before


def test_a_table_whose_record_does_not_match_is_read_with_joins(crafted_store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "altered.duckdb"
    shutil.copy(crafted_store, copy)
    with duckdb.connect(str(copy)) as con:
        con.execute(f"UPDATE {ROW_INSTANTS} SET instant_sql = 'other' WHERE table_name = 'hosp.emar_detail'")
        con.execute(f"DELETE FROM {ROW_INSTANTS} WHERE table_name = 'hosp.poe' AND column_name = ?",
                    [f"{INSTANT_PREFIX}known_0"])
    with open_store_reader(copy) as reader:
        assert "hosp.diagnoses_icd" in reader.instants
        assert "hosp.emar_detail" not in reader.instants and "hosp.poe" not in reader.instants


def test_rewriting_the_index_keeps_one_set_of_instant_columns(crafted_store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "twice.duckdb"
    shutil.copy(crafted_store, copy)
    with duckdb.connect(str(copy)) as con:
        first = sorted(_reserved(con))
        order = con.execute("SELECT emar_id, product_unit, pharmacy_id FROM hosp.emar_detail").fetchall()
        write_event_index(con)
        assert sorted(_reserved(con)) == first
        assert con.execute("SELECT emar_id, product_unit, pharmacy_id FROM hosp.emar_detail").fetchall() == order  # store order
        columns = [c for (c,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'hosp' AND table_name = 'emar_detail'"
        ).fetchall()]
    assert tuple(columns[: len(get_table("hosp.emar_detail").columns)]) == get_table("hosp.emar_detail").column_names
