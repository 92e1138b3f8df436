"""A record tool on a table not loaded yet reads it with one statement on the store, composed around the policy's
select; the text is byte-for-byte what the loaded table gives.

Every record tool (and ``ehr.get_unique_values``) runs with several argument shapes on every visible table at
several cutoffs twice: on an episode that never loads a table (each call one statement on the store reader) and on
an episode of the same key with every table loaded (the tools read the sealed copy). Text, structured data,
truncation and errors must be equal. Stores: the demo, and a crafted store with tricky values (NULLs, ties in
time, text with quotes, newlines and parameter marks, empty tables, hidden future rows of the patient and rows of
another patient).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _tool_cases import tool_outcome

from clinseek.episode import Episode, EpisodeKey, build_episode, open_store_reader
from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.schema import get_table
from clinseek.store import connect_store
from clinseek.tools import Limits, ToolContext, get_tool
from policy.crafted import OTHER, ROWS, S, T, write_store

FULL = Limits()
SMALL = Limits(max_rows=2, max_tool_chars=1_200, max_unique_values=2)
"""Row, character and distinct-value caps hit: totals counted (a second statement), paging notices written."""

TRICKY = "O'Brien \"quoted\"\nsecond line ? $1 %s"
"""Text a statement must carry as data: quotes of both kinds, a newline, parameter marks."""


def _tricky_rows() -> dict[str, list[dict[str, Any]]]:
    """The crafted store's rows plus rows that exercise the composed statement's values and order."""
    rows = {name: list(found) for name, found in ROWS.items()}
    at = T - dt.timedelta(hours=3)
    labs = [  # ties in time (the key breaks them), NULL values and units, text with quotes and newlines
        dict(labevent_id=9001 + i, subject_id=S, hadm_id=101, specimen_id=77, itemid=50912, charttime=at,
             storetime=at + dt.timedelta(minutes=5), value=value, valuenum=num, valueuom=uom, flag=flag,
             comments=comment)
        for i, (value, num, uom, flag, comment) in enumerate([
            ("1.1", 1.1, "mg/dL", None, TRICKY),
            (None, None, None, "abnormal", None),
            ("1.1", 1.1, "mg/dL", None, "  padded  "),
        ])
    ]
    labs.append(dict(labevent_id=9010, subject_id=S, hadm_id=101, specimen_id=78, itemid=50912,  # future: hidden
                     charttime=T + dt.timedelta(hours=1), value="9.9", valuenum=9.9, valueuom="mg/dL", comments=TRICKY))
    labs.append(dict(labevent_id=9011, subject_id=OTHER, hadm_id=201, specimen_id=79, itemid=50912,  # another patient
                     charttime=at, value="7.7", valuenum=7.7, valueuom="mg/dL", comments=TRICKY))
    rows["hosp.labevents"] = [*rows.get("hosp.labevents", []), *labs]
    return rows


@pytest.fixture(scope="module")
def tricky_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_store(tmp_path_factory.mktemp("direct") / "tricky.duckdb", _tricky_rows(), "tests/tools/test_direct_reads.py")


def _loaded(ep: Episode) -> set[str]:
    """Patient tables created in the episode's database so far."""
    rows = ep.execute(
        "SELECT schema_name || '.' || table_name FROM duckdb_tables() WHERE schema_name <> 'candidates'",
        tables=(), max_rows=1000,
    ).rows
    return {r[0] for r in rows if get_table(r[0]).visibility != "dictionary"}


def _calls(ep: Episode, table: str) -> Iterator[tuple[str, dict[str, str]]]:
    """Argument shapes for ``table``, values taken from its visible rows (read on the loaded episode)."""
    times = ep.event_times(table)
    if times is not None and len(times):
        first, last = times[0].as_py(), times[len(times) - 1].as_py()
        yield "ehr.get_records_by_time", {"table_name": table, "start_time": str(first),
                                          "end_time": str(last + dt.timedelta(seconds=1))}
        yield "ehr.get_latest_records", {"table_name": table}
    else:
        yield "ehr.get_records_by_time", {"table_name": table, "start_time": "2100-01-01", "end_time": "2200-01-01"}
    yield "ehr.get_records_by_keyword", {"table_name": table, "keyword": TRICKY if len(times or ()) < 3 else "1"}
    view = ep.execute(f"SELECT * FROM {table} LIMIT 20", tables=[table], max_rows=20)
    picked: dict[str, int] = {}  # the first text column and the first of another type with a value
    for i, type_ in enumerate(view.types):
        kind = "text" if type_ == "VARCHAR" else "other"
        if kind not in picked and any(r[i] is not None for r in view.rows) and view.columns[i] != "subject_id":
            picked[kind] = i
    for kind, i in picked.items():
        column = view.columns[i]
        value = next(r[i] for r in view.rows if r[i] is not None)
        text = value.isoformat(sep=" ") if isinstance(value, dt.datetime) else str(value)
        yield "ehr.get_records_by_value", {"table_name": table, "column_name": column, "value": text}
        if kind == "text":
            yield "ehr.get_unique_values", {"table_name": table, "column_name": column}


_LATER = frozenset({"ehr.get_records_by_time", "ehr.get_records_by_keyword"})
"""The calls compared again at the later keys (the time window holds every visible row)."""


def _compare(store: Path, keys: list[EpisodeKey], tables: frozenset[str] | None = None) -> set[str]:
    """Compare every call of :func:`_calls` on each patient table of the first key, the calls of :data:`_LATER` on
    those of the other keys whose visible rows differ from the first key's; the tables compared."""
    checked: set[str] = set()
    counts: dict[str, int] = {}
    with open_store_reader(store) as reader:
        for key in keys:
            with build_episode(reader, key) as cold, build_episode(reader, key) as warm:
                for table, n in sorted(cold.table_counts().items()):
                    if get_table(table).visibility == "dictionary" or (tables is not None and table not in tables):
                        continue
                    if key != keys[0] and n == counts.get(table):  # the same rows as at the first key
                        continue
                    warm.execute("SELECT 1", tables=[table])  # loaded: the tools read the copy
                    for i, (name, args) in enumerate(_calls(warm, table)):
                        if key != keys[0] and name not in _LATER:
                            continue
                        limits = (FULL, SMALL)[i % 2]
                        direct = tool_outcome(ToolContext(cold, limits), name, args)
                        copied = tool_outcome(ToolContext(warm, limits), name, args)
                        assert direct == copied, (key, table, name, args, limits)
                    checked.add(table)
                assert not _loaded(cold), key  # no call loaded a table
                counts = counts or cold.table_counts()
    return checked


def test_record_tools_on_the_store_give_what_the_loaded_tables_give_crafted(tricky_store: Path) -> None:
    keys = [EpisodeKey(S, T, TEXT_POLICY), EpisodeKey(S, T + dt.timedelta(days=3), MM_POLICY)]
    checked = _compare(tricky_store, keys)
    assert {"hosp.labevents", "hosp.admissions", "hosp.diagnoses_icd", "hosp.microbiologyevents", "ed.triage"} <= checked


def test_record_tools_on_the_store_give_what_the_loaded_tables_give_demo(demo_store: Path) -> None:
    con = connect_store(demo_store)
    try:
        admit, disch = con.execute(
            "SELECT admittime, dischtime FROM hosp.admissions WHERE subject_id = 10026406 ORDER BY admittime LIMIT 1"
        ).fetchall()[0]
    finally:
        con.close()
    wanted = frozenset({"hosp.admissions", "hosp.labevents", "hosp.diagnoses_icd", "hosp.procedures_icd", "hosp.omr",
                        "hosp.prescriptions", "hosp.emar", "hosp.emar_detail", "hosp.microbiologyevents",
                        "icu.inputevents", "ed.triage"})  # labels, inherited, derived and plain times, the collapse
    checked = _compare(demo_store, [EpisodeKey(10026406, admit + (disch - admit) / 2, MM_POLICY)], wanted)
    assert wanted - {"ed.triage", "icu.inputevents"} <= checked


def test_a_loaded_table_is_read_from_its_copy(tricky_store: Path) -> None:
    """Once the model's SQL loaded a table the tools read the copy; tables not loaded stay so."""
    with open_store_reader(tricky_store) as reader, build_episode(reader, EpisodeKey(S, T)) as ep:
        ctx = ToolContext(ep)
        get_tool("ehr.get_latest_records").fn(ctx, table_name="labevents")
        assert not _loaded(ep)
        ep.execute("SELECT count(*) FROM hosp.labevents", tables=["hosp.labevents"])
        assert _loaded(ep) == {"hosp.labevents"}
        get_tool("ehr.get_records_by_keyword").fn(ctx, table_name="labevents", keyword="1")
        get_tool("ehr.get_latest_records").fn(ctx, table_name="admissions")
        assert _loaded(ep) == {"hosp.labevents"}
