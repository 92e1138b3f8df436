"""Attacks on the record tools' reads of a table not loaded yet (one statement on the store reader's connection).

Each test runs a record tool on an episode that never loads the table (the statement composed around the policy's
select runs on the store) and, where it compares, on an episode of the same key with the table loaded: text,
structured data, truncation and errors must be equal, and nothing of another patient, of a hidden table or from
after the cutoff may appear.
"""

from __future__ import annotations

import datetime as dt
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from _tool_cases import tool_outcome

from clinseek.episode import Episode, EpisodeKey, EpisodeTimeout, build_episode, open_store_reader
from clinseek.episode._episode import SOURCE_TOKEN
from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.schema import get_table
from clinseek.store import write_event_index
from clinseek.store._duck import record_table
from clinseek.tools import Limits, ToolContext
from policy.crafted import ICU_OPEN, OPEN, OTHER, ROWS, S, T, write_store

AT = T - dt.timedelta(hours=1)
SECRET = "SECRET_FUTURE_OR_OTHER"
"""Text held only by rows no episode of patient S at T may see (a later row, another patient's row)."""

CHART = 4_000
"""Chart events added to the store: a keyword search over them takes long enough to be cut by a tiny time limit."""

NASTY = [
    "?", "? ?", "$1", "$2 $1", "'", "''", '"', "' OR 1=1 --", "/* ? */", "-- ?", SOURCE_TOKEN,
    f"({SOURCE_TOKEN})", "a\x00b", "\\", "%s", "x" * 20_000, "; SELECT 1", "secret", "future_or",
]
"""Keywords and values a statement must carry as data: parameter marks of both styles, quotes, comments, the
source token, NUL, a very long string, a second statement, and parts of :data:`SECRET`."""


def _rows() -> dict[str, list[dict[str, Any]]]:
    rows = {name: list(found) for name, found in ROWS.items()}
    rng = random.Random(1)
    rx = [  # rows tied on the whole ORDER BY (starttime, then the registry key pharmacy_id, drug, drug_type)
        dict(subject_id=S, hadm_id=OPEN, pharmacy_id=7, starttime=AT, stoptime=AT + dt.timedelta(days=1),
             drug_type="MAIN", drug=rng.choice(["A", "B"]), route=rng.choice(["IV", "PO", None]), dose_val_rx=str(i))
        for i in range(30)
    ]
    rx.append(dict(subject_id=S, hadm_id=OPEN, pharmacy_id=8, starttime=T + dt.timedelta(hours=1),  # future
                   drug_type="MAIN", drug=SECRET, route=SOURCE_TOKEN))
    rx.append(dict(subject_id=OTHER, hadm_id=200, pharmacy_id=9, starttime=AT, drug_type="MAIN",  # another patient
                   drug=SECRET, route="?"))
    rows["hosp.prescriptions"] = [*rows.get("hosp.prescriptions", []), *rx]
    labs = [
        dict(labevent_id=9100, subject_id=S, hadm_id=OPEN, itemid=50912, charttime=AT, storetime=AT,
             value="?", valuenum=1.0, comments=f"{SOURCE_TOKEN} ? $1 '--"),
        dict(labevent_id=9101, subject_id=S, hadm_id=OPEN, itemid=50912, charttime=T + dt.timedelta(minutes=1),
             value=SECRET, valuenum=2.0, comments=SECRET),
        dict(labevent_id=9102, subject_id=OTHER, hadm_id=200, itemid=50912, charttime=AT, value=SECRET,
             valuenum=3.0, comments=SECRET),
    ]
    rows["hosp.labevents"] = [*rows.get("hosp.labevents", []), *labs]
    return rows


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:func:`_rows`, and :data:`CHART` chart events (a keyword search over them takes long enough to be interrupted)."""
    path = write_store(tmp_path_factory.mktemp("attack") / "attack.duckdb", _rows(), "tests/tools/test_direct_read_attacks.py")
    con = duckdb.connect(str(path))
    try:
        con.execute(  # a quarter of another patient, a ninth after the cutoff, ties in time
            "INSERT INTO icu.chartevents (subject_id, hadm_id, stay_id, charttime, storetime, itemid, value, valuenum, "
            "valueuom) SELECT CASE WHEN i % 4 = 0 THEN $1 ELSE $2 END, CASE WHEN i % 4 = 0 THEN 200 ELSE $3 END, "
            "CASE WHEN i % 4 = 0 THEN 250 ELSE $4 END, CASE WHEN i % 9 = 0 THEN $5 + INTERVAL 2 HOUR "
            "ELSE $6 - (i % 3) * INTERVAL 1 HOUR END, $6 + ((i * 7) % 90) * INTERVAL 1 MINUTE, 220045 + (i * 13) % 40, "
            "CAST(i AS VARCHAR), i, CASE WHEN i % 2 = 0 THEN 'bpm' END FROM range($7) r(i)",
            [OTHER, S, OPEN, ICU_OPEN, T, AT, CHART],
        )
        record_table(con, get_table("icu.chartevents"), row_count=CHART + len(ROWS["icu.chartevents"]))
        write_event_index(con)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path


@pytest.fixture
def episodes(store: Path) -> Iterator[tuple[Episode, Episode]]:
    """(cold, warm): one key, the second with prescriptions and labevents loaded."""
    with open_store_reader(store) as reader, build_episode(reader, EpisodeKey(S, T, TEXT_POLICY)) as cold, \
            build_episode(reader, EpisodeKey(S, T, TEXT_POLICY)) as warm:
        warm.execute("SELECT 1", tables=["hosp.prescriptions", "hosp.labevents"])
        yield cold, warm


def _loaded(ep: Episode) -> set[str]:
    rows = ep.execute("SELECT schema_name || '.' || table_name FROM duckdb_tables() WHERE schema_name <> 'candidates'",
                      tables=(), max_rows=1000).rows
    return {r[0] for r in rows if get_table(r[0]).visibility != "dictionary"}


def test_rows_tied_on_the_whole_order_cut_at_the_row_limit_are_the_loaded_tables(episodes: tuple[Episode, Episode]) -> None:
    """Rows tied on every ORDER BY expression (here prescriptions with one starttime and one registry key;
    icu.chartevents, datetimeevents, ingredientevents, outputevents, ed.medrecon, ed.pyxis have no key at all: see
    tests/tools/test_total_order.py) cut at the row limit: the same rows in the same order on the store as on the
    loaded copy (once a finding: DuckDB's top-N kept other rows on each path)."""
    cold, warm = episodes
    small = Limits(max_rows=3)
    for name, args in [("ehr.get_latest_records", {"table_name": "prescriptions"}),
                       ("ehr.get_records_by_time", {"table_name": "prescriptions", "start_time": "2150-01-01",
                                                    "end_time": "2151-01-01"})]:
        assert tool_outcome(ToolContext(cold, small), name, args) == tool_outcome(ToolContext(warm, small), name, args)


@pytest.mark.parametrize("limits", [Limits(), Limits(max_rows=2, max_tool_chars=1_200, max_unique_values=2)])
def test_hostile_keywords_and_values_are_data_on_the_store(episodes: tuple[Episode, Episode], limits: Limits) -> None:
    """Parameter marks (? and $n), quotes, comments, the source token, NUL, 20k characters and a second statement as
    keyword or value: the same outcome as on the loaded copy, never a row of another patient or of after the cutoff,
    and no table loaded."""
    cold, warm = episodes
    for table, column in [("labevents", "comments"), ("prescriptions", "route")]:
        for text in NASTY:
            for name, args in [("ehr.get_records_by_keyword", {"table_name": table, "keyword": text}),
                               ("ehr.get_records_by_value", {"table_name": table, "column_name": column, "value": text}),
                               ("ehr.get_records_by_value", {"table_name": table, "column_name": "subject_id",
                                                             "value": text})]:
                if not text.strip() and name.endswith("keyword"):
                    continue
                got = tool_outcome(ToolContext(cold, limits), name, args)
                assert got == tool_outcome(ToolContext(warm, limits), name, args), (name, args)
                assert SECRET not in repr(got), (name, args)
    assert not _loaded(cold)


def test_nothing_hidden_reaches_the_record_tools_on_the_store(episodes: tuple[Episode, Episode]) -> None:
    """Every record tool over the whole time axis, every column's distinct values: no later row, no other patient's."""
    cold, _ = episodes
    ctx = ToolContext(cold, Limits(max_rows=1000, max_tool_chars=10_000_000, max_unique_values=1000))
    for table in ("labevents", "prescriptions"):
        outs = [tool_outcome(ctx, "ehr.get_records_by_time", {"table_name": table, "start_time": "1900-01-01",
                                                              "end_time": "2300-01-01"}),
                tool_outcome(ctx, "ehr.get_latest_records", {"table_name": table}),
                tool_outcome(ctx, "ehr.get_records_by_keyword", {"table_name": table, "keyword": "secret"}),
                tool_outcome(ctx, "ehr.get_records_by_value", {"table_name": table, "column_name": "subject_id",
                                                               "value": str(OTHER)})]
        for column in get_table(f"hosp.{table}").column_names:
            outs.append(tool_outcome(ctx, "ehr.get_unique_values", {"table_name": table, "column_name": column}))
        for out in outs:
            assert SECRET not in repr(out)
            assert "'subject_id': 2" not in repr(out) and f"subject_id={OTHER}," not in repr(out)
    assert not _loaded(cold)


def test_a_stale_interrupt_on_the_threads_store_cursor_reaches_no_later_statement(store: Path) -> None:
    """Two episodes of one reader read on one thread's store cursor: an interrupt of that cursor fired after a read
    ended (a watchdog late for an earlier episode's statement, a close racing its end) interrupts neither the other
    episode's next read nor the same episode's, and an episode's interrupt between reads is a no-op."""
    with open_store_reader(store) as reader, build_episode(reader, EpisodeKey(S, T, TEXT_POLICY)) as a, \
            build_episode(reader, EpisodeKey(S, T + dt.timedelta(days=3), MM_POLICY)) as b:
        args = {"table_name": "labevents", "start_time": "2150-01-01", "end_time": "2151-01-01"}
        first = tool_outcome(ToolContext(a), "ehr.get_records_by_time", args)
        cursor = reader._cursor()  # this thread's cursor: the one both episodes' statements run on
        for _ in range(3):
            cursor.interrupt()
            a._interrupt()
            a._interrupt(a._watch.query)
            assert tool_outcome(ToolContext(b), "ehr.get_records_by_time", args)[0]
            assert tool_outcome(ToolContext(a), "ehr.get_records_by_time", args) == first
        assert not _loaded(a) and not _loaded(b)


def test_a_timed_out_store_read_interrupts_no_later_statement(store: Path) -> None:
    """Store reads cut by a time limit far below their run time (a race between the watchdog and the statement's end,
    every time): the next read of another episode on the same thread's cursor, and of the same episode, is never
    interrupted; an episode reading on another thread meanwhile is never interrupted either."""
    args = {"table_name": "chartevents", "keyword": "1"}
    tiny = Limits(sql_timeout_s=0.0005)
    with open_store_reader(store) as reader, build_episode(reader, EpisodeKey(S, T, TEXT_POLICY)) as a, \
            build_episode(reader, EpisodeKey(S, T, MM_POLICY)) as b, build_episode(reader, EpisodeKey(S, T)) as c:
        want_a = tool_outcome(ToolContext(a), "ehr.get_records_by_keyword", args)
        want_b = tool_outcome(ToolContext(b), "ehr.get_records_by_keyword", args)
        assert want_a[0] is True and want_b[0] is True
        stop = threading.Event()
        other: list[Any] = []

        def elsewhere() -> None:  # episode c on its own thread (its own cursor), no time limit to speak of
            while not stop.is_set():
                other.append(tool_outcome(ToolContext(c), "ehr.get_records_by_keyword", args))

        thread = threading.Thread(target=elsewhere)
        thread.start()
        cut = 0
        try:
            for i in range(12):
                got = tool_outcome(ToolContext(a, tiny), "ehr.get_records_by_keyword", args)
                cut += got[:2] == ("error", "timeout")
                assert got[:2] == ("error", "timeout") or got == want_a, i
                assert tool_outcome(ToolContext(b), "ehr.get_records_by_keyword", args) == want_b, i
                assert tool_outcome(ToolContext(a), "ehr.get_records_by_keyword", args) == want_a, i
        finally:
            stop.set()
            thread.join()
        assert cut, "no read was cut: the race was not exercised"
        assert other and all(o == want_a for o in other)
        assert not _loaded(a) and not _loaded(b) and not _loaded(c)


class _SlowStart:
    """A DuckDB connection or cursor whose statements start :data:`STALL` seconds late: the thread stalls inside
    ``execute`` before DuckDB starts the statement (on the GIL, descheduled), after the time limit was armed."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        time.sleep(STALL)
        return self._inner.execute(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


STALL = 0.05
"""Longer than the time limits below (0.01 s): their deadline has passed when the statement starts."""

LONG_RUN = "SELECT count(*) FROM {source} a, range(100000000) r WHERE r.range % 7 = a.n"
"""A statement that runs far longer than the watchdog's RETRY_S (seconds unless interrupted)."""


def test_a_deadline_that_passes_before_the_store_statement_starts_still_stops_it(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reading thread stalls after arming the time limit, before starting the statement, past its deadline: the
    watchdog's interrupt lands on an idle cursor (DuckDB ignores it), so the statement is not started at all (once
    a finding: it then ran with no limit)."""
    with open_store_reader(store) as reader, build_episode(reader, EpisodeKey(S, T)) as ep:
        select_rows = reader.select_rows

        def stalled(sql: str, params: list[Any], *, max_rows: int, what: str, running: Any) -> Any:
            def late(interrupt: Any) -> Any:
                passed = running(interrupt)
                time.sleep(STALL)  # the reading thread stalls after arming the limit, before the statement starts
                return passed

            return select_rows(sql, params, max_rows=max_rows, what=what, running=late)

        monkeypatch.setattr(reader, "select_rows", stalled)
        args = {"table_name": "chartevents", "keyword": "1"}
        got = tool_outcome(ToolContext(ep, Limits(sql_timeout_s=0.01)), "ehr.get_records_by_keyword", args)
        assert got[:2] == ("error", "timeout"), got[:2]
        monkeypatch.undo()
        assert tool_outcome(ToolContext(ep), "ehr.get_records_by_keyword", args)[0] is True
        assert not _loaded(ep)


def test_a_deadline_that_passes_while_the_store_statement_starts_still_stops_it(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stall falls inside the cursor's ``execute``, after the last check of the deadline: the interrupts that
    land before DuckDB starts the statement are lost, and the watchdog repeats them until one stops it; the next
    statement on that cursor runs to its end."""
    with open_store_reader(store) as reader, build_episode(reader, EpisodeKey(S, T)) as ep:
        cursor = reader._cursor
        monkeypatch.setattr(reader, "_cursor", lambda: _SlowStart(cursor()))

        def statement(source: str | None) -> str:
            return LONG_RUN.format(source=f"(SELECT itemid % 7 AS n FROM {source or 'icu.chartevents'})")

        started = time.monotonic()
        with pytest.raises(EpisodeTimeout):
            ep.read("icu.chartevents", statement, tables=["icu.chartevents"], timeout_s=0.01)
        assert time.monotonic() - started < 60
        monkeypatch.undo()
        args = {"table_name": "chartevents", "keyword": "1"}
        assert tool_outcome(ToolContext(ep), "ehr.get_records_by_keyword", args)[0] is True
        assert not _loaded(ep)


def test_a_deadline_that_passes_while_the_sealed_statement_starts_still_stops_it(store: Path) -> None:
    """The same stall on the sealed database's connection (``Episode.execute``): the repeated interrupt stops the
    statement; the episode's next statement runs."""
    with open_store_reader(store) as reader, build_episode(reader, EpisodeKey(S, T)) as ep:
        ep.execute("SELECT 1", tables=())  # the first query takes the episode's database
        con = ep._con
        ep._con = _SlowStart(con)
        try:
            with pytest.raises(EpisodeTimeout):
                ep.execute(LONG_RUN.format(source="(SELECT 3 AS n)"), tables=(), timeout_s=0.01)
        finally:
            ep._con = con
        assert ep.execute("SELECT 1", tables=()).rows == [(1,)]
