"""attack14: leaks on columns and patients the earlier audits did not try (the open MIMIC-IV demo).

- A time written as text: ``hosp.poe_detail.field_value`` holds a consult's ``Consult Status Time`` (and its
  ``Consult Status``), set when the consult is answered, up to 3.7 days after the order's ``ordertime`` (the
  row's event time). The generic rule hides TIMESTAMP values after the cutoff, not text; the arithmetic audit
  reads numbers only. So an episode inside the admission showed a time days after the cutoff (the patient is
  still in hospital then). Fixed in the registry (the column's class: known when the consult is answered);
  the store-wide guard below checks the whole class: no text value of an ``event``/``static`` column of any
  patient table names a time after its row's event time.
- Dense per-patient sequence numbers count hidden rows: ``hosp.emar.emar_seq`` (and ``emar_id``) and
  ``hosp.poe.poe_seq`` (and ``poe_id``) are not in event-time order, so a gap between the visible numbers is
  the number of hidden rows charted after the cutoff (up to 110 administrations charted over the next day).
  Fixed in session 15: the policy renumbers them in each episode (``clinseek.schema.Sequence``), consistently
  over emar / emar_detail and poe / poe_detail / prescriptions / pharmacy; the class: test_sequence_gaps.py.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.schema import tables
from clinseek.store import connect_store, valid_row_instants

_STAMP = r"\d{4}-\d\d-\d\d( \d\d:\d\d(:\d\d)?)?"


def _text_instant(column: str) -> str:
    """SQL: the first date/time written in a text column (a bare date counts at the end of its day), or NULL."""
    found = f"regexp_extract({column}, '{_STAMP}')"
    return (
        f"CASE WHEN length({found}) = 10 THEN try_cast({found} AS TIMESTAMP) + INTERVAL 1 DAY "
        f"ELSE try_cast({found} AS TIMESTAMP) END"
    )


# (subject, cutoff): between a consult order's ordertime and its Consult Status Time (MIMIC-IV demo)
_CONSULTS = [
    (10014354, datetime(2148, 8, 25)),  # status time 2148-08-28 06:57:31, ordered 2148-08-24 15:09
    (10039708, datetime(2143, 9, 27, 1)),  # 2143-09-27 07:05:19, ordered 2143-09-26 23:22
    (10020306, datetime(2135, 1, 22, 12)),  # 2135-01-22 12:39:16, ordered 09:08
    (10015860, datetime(2192, 8, 2)),  # 2192-08-02 07:28:35, ordered 2192-08-01 17:09
]


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
@pytest.mark.parametrize(("subject", "cutoff"), _CONSULTS)
def test_attack14_no_text_value_names_a_time_after_the_cutoff(
    demo_reader: StoreReader, subject: int, cutoff: datetime, policy: str
) -> None:
    with build_episode(demo_reader, EpisodeKey(subject, cutoff, policy=policy)) as ep:
        r = ep.execute(
            f"SELECT field_name, field_value, {_text_instant('field_value')} AS instant FROM poe_detail "
            "WHERE field_name LIKE 'Consult Status%'"
        )
        late = [row for row in r.rows if row[2] is not None and row[2] >= cutoff]
        assert late == []
        # the consult answered after the cutoff has no status rows yet (attack16: only answered consults have
        # them, so a row with its values hidden said that it would be answered); earlier consults show theirs
        pending = {row[0] for row in r.rows if row[1] is None}
        assert pending == set()


# the nephrology consult of 10014354 (store id 10014354-2244; episodes renumber poe ids, see test_sequence_gaps.py)
_CONSULT_DETAILS = (
    "SELECT field_name, field_value FROM poe_detail WHERE poe_id = "
    "(SELECT poe_id FROM poe WHERE ordertime = TIMESTAMP '2148-08-24 15:09:05') ORDER BY field_name"
)


def test_attack14_a_consult_status_shows_once_answered(demo_reader: StoreReader) -> None:
    """Not hidden for ever: after the status time both fields are visible (other fields from the order on)."""
    answered = datetime(2148, 8, 28, 6, 57, 32)
    with build_episode(demo_reader, EpisodeKey(10014354, answered)) as ep:
        rows = ep.execute(
            _CONSULT_DETAILS
        ).rows
    assert rows == [
        ("Consult Status", "Accepted"),
        ("Consult Status Time", "2148-08-28 06:57:31"),
        ("Level of Urgency", "Routine (within 24 hours)"),
    ]
    with build_episode(demo_reader, EpisodeKey(10014354, answered - timedelta(seconds=2))) as ep:
        rows = ep.execute(
            _CONSULT_DETAILS
        ).rows
    assert rows == [("Level of Urgency", "Routine (within 24 hours)")]  # no status rows yet (attack16)


def test_attack14_a_consult_status_time_not_written_as_a_time_keeps_the_status_hidden(demo_store: Path,
                                                                                     tmp_path: Path) -> None:
    """A malformed status time is no time: the status rows stay hidden, and the read does not fail (on PostgreSQL the
    instant has no try_cast: only text written as a time is cast)."""
    import shutil

    import duckdb

    from clinseek.store import write_event_index

    store = tmp_path / "malformed.duckdb"
    shutil.copy(demo_store, store)
    with duckdb.connect(str(store)) as con:
        con.execute("UPDATE hosp.poe_detail SET field_value = '28/08/2148 6:57' WHERE poe_id = '10014354-2244' "
                    "AND field_name = 'Consult Status Time'")
        write_event_index(con)  # the stored row instants, as an ingest of this value would write them
    with build_episode(store, EpisodeKey(10014354, datetime(2148, 9, 30))) as ep:
        rows = ep.execute(
            _CONSULT_DETAILS
        ).rows
    assert rows == [("Level of Urgency", "Routine (within 24 hours)")]  # the status rows never (attack16)


def test_attack14_no_event_column_writes_a_later_time_as_text(demo_store: Path) -> None:
    """The class guard over the whole store: a text value of a column known at the row's event time (``event``,
    ``static``) that names a later time would show that time at every cutoff in between."""
    con = connect_store(demo_store)
    try:
        held = {f"{s}.{t}" for s, t in con.execute("SELECT schema_name, table_name FROM duckdb_tables()").fetchall()}
        present = {t.qualified for t in tables() if t.qualified in held}
        instants = valid_row_instants(con, present, counts_hold=True)
        found: dict[str, int] = {}
        checked = 0
        for table in tables():
            if not table.is_patient_table or table.visibility != "event" or table.qualified not in present:
                continue
            assert table.event_time is not None
            stored = instants.get(table.qualified)
            if table.event_time.parent is not None:
                assert stored is not None and stored.event_time is not None, table.qualified
                event = f't."{stored.event_time}"'
            else:
                event = table.event_time.expr
            for column in table.columns:
                if column.type != "VARCHAR" or column.known not in ("event", "static"):
                    continue
                checked += 1
                n = con.execute(
                    f'SELECT count(*) FROM {table.qualified} t WHERE {_text_instant(f"t.{column.name}")} > {event}'
                ).fetchall()[0][0]
                if n:
                    found[f"{table.qualified}.{column.name}"] = n
        assert checked > 80
        assert found == {}
    finally:
        con.close()


def _straddled(store: Path, table: str, seq: str, time: str, subject: int, cutoff: datetime) -> tuple[int, int, int, int]:
    """(min, max, count of the ``seq`` numbers the episode shows, hidden rows of the store numbered below a
    visible row: what the original numbers' gaps would count)."""
    with build_episode(store, EpisodeKey(subject, cutoff)) as ep:
        lo, hi, n = ep.execute(f"SELECT min({seq}), max({seq}), count(*) FROM {table}").rows[0]
    con = connect_store(store)
    try:
        below = con.execute(
            f"SELECT count(*) FROM hosp.{table} WHERE subject_id = ? AND {time} >= ? AND {seq} < "
            f"(SELECT max({seq}) FROM hosp.{table} WHERE subject_id = ? AND {time} < ?)",
            [subject, cutoff, subject, cutoff],
        ).fetchall()[0][0]
    finally:
        con.close()
    return lo, hi, n, below


@pytest.mark.parametrize(
    ("table", "seq", "time", "subject", "cutoff"),
    [
        ("emar", "emar_seq", "charttime", 10035631, datetime(2116, 3, 8, 15, 31, 1)),  # 110 administrations
        ("emar", "emar_seq", "charttime", 10029291, datetime(2123, 2, 20, 17, 58, 1)),  # 51
        ("poe", "poe_seq", "ordertime", 10014078, datetime(2166, 8, 24, 11, 50, 27)),  # 20 orders
    ],
)
def test_attack14_sequence_gaps_do_not_count_hidden_rows(
    demo_store: Path, table: str, seq: str, time: str, subject: int, cutoff: datetime
) -> None:
    """Dense per-patient counters not in event-time order are renumbered in each episode (fixed in session 15;
    the class: test_sequence_gaps.py)."""
    lo, hi, n, below = _straddled(demo_store, table, seq, time, subject, cutoff)
    assert below > 0, "the probe must straddle hidden rows"
    assert (lo, hi) == (1, n), f"{table}.{seq} shows {lo}..{hi} over {n} rows: the gaps count hidden rows"


# A visible row must not name a row the episode does not hold yet: the id of a later row is itself news (an order
# placed days later; poe_seq, dense per patient, counts the orders until then). (child table, column, parent
# table, parent column)
_REFERENCES = [
    ("prescriptions", "poe_id", "poe", "poe_id"),
    ("pharmacy", "poe_id", "poe", "poe_id"),
    ("emar", "poe_id", "poe", "poe_id"),
    ("emar", "pharmacy_id", "pharmacy", "pharmacy_id"),
    ("emar_detail", "pharmacy_id", "pharmacy", "pharmacy_id"),
    ("poe", "discontinue_of_poe_id", "poe", "poe_id"),
    ("poe", "discontinued_by_poe_id", "poe", "poe_id"),
    ("prescriptions", "pharmacy_id", "pharmacy", "pharmacy_id"),
    ("emar_detail", "emar_id", "emar", "emar_id"),
    ("poe_detail", "poe_id", "poe", "poe_id"),
]

# inside admissions of several demo patients (the first: a prescription started 2201-10-31 names order
# 10027602-432, placed 2201-11-16, while the last visible order is 10027602-90)
_INSIDE = [
    (10027602, datetime(2201, 11, 1)),
    (10035631, datetime(2116, 3, 8, 15, 31, 1)),
    (10039708, datetime(2140, 1, 25)),
    (10029291, datetime(2123, 2, 21)),
    (10014354, datetime(2148, 8, 25)),
]


@pytest.mark.parametrize(("subject", "cutoff"), _INSIDE)
def test_attack14_no_visible_row_names_a_row_not_yet_visible(demo_store: Path, demo_reader: StoreReader, subject: int, cutoff: datetime) -> None:
    unseen: dict[tuple[str, str], list[Any]] = {}
    with build_episode(demo_reader, EpisodeKey(subject, cutoff)) as ep:
        for child, column, parent, key in _REFERENCES:
            unseen[child, column] = ep.execute(  # one row: execute cuts results at max_rows
                f"SELECT coalesce(list(DISTINCT c.{column}), []) FROM {child} c WHERE c.{column} IS NOT NULL "
                f"AND c.{column} NOT IN (SELECT p.{key} FROM {parent} p WHERE p.{key} IS NOT NULL)"
            ).rows[0][0]
        seqs = ep.execute("SELECT (SELECT max(poe_seq) FROM poe), (SELECT max(poe_seq) FROM prescriptions)").rows[0]
    con = connect_store(demo_store)
    try:  # a name of a row the store lacks altogether (24 discontinue_of_poe_id in the demo) tells nothing
        named = {
            f"{child}.{column}": n
            for (child, column, parent, key) in _REFERENCES
            if (ids := unseen[child, column])
            and (n := con.execute(
                f"SELECT count(*) FROM hosp.{parent} WHERE subject_id = ? AND list_contains(?, {key})", [subject, ids]
            ).fetchall()[0][0])
        }
    finally:
        con.close()
    assert named == {}
    assert seqs[1] is None or (seqs[0] is not None and seqs[1] <= seqs[0])


def test_attack14_an_order_named_by_a_prescription_shows_once_placed(demo_reader: StoreReader) -> None:
    """Not hidden for ever: once the order is placed (store id 10027602-432, ordertime 2201-11-16 17:22:23) the
    prescriptions started 2201-10-31 name it, by the episode's number of that order (test_sequence_gaps.py)."""
    sql = (
        "SELECT DISTINCT p.ordertime, r.poe_seq = p.poe_seq FROM prescriptions r LEFT JOIN poe p ON p.poe_id = r.poe_id "
        "WHERE r.pharmacy_id IN (53388706, 56561852)"
    )
    with build_episode(demo_reader, EpisodeKey(10027602, datetime(2201, 11, 16, 17, 22, 24))) as ep:
        assert ep.execute(sql).rows == [(datetime(2201, 11, 16, 17, 22, 23), True)]
    with build_episode(demo_reader, EpisodeKey(10027602, datetime(2201, 11, 16, 17, 22, 23))) as ep:
        assert ep.execute(sql).rows == [(None, None)]


# Back-dated prescriptions (starttime before the pharmacy order's entertime, up to 4 days): fixed by leak14b, a
# prescription / pharmacy order is known at greatest(starttime, entertime); see test_attack14_backdated.py.


@pytest.mark.parametrize(
    ("subject", "cutoff"),
    [
        (10003400, datetime(2137, 8, 14)),  # Fluconazole: starttime 2137-08-12 10:00, entered 2137-08-16 10:08
        (10022041, datetime(2187, 5, 20, 12)),  # LeVETiracetam: 2187-05-19 14:00, entered 2187-05-22 10:53
        (10002495, datetime(2141, 5, 27, 12)),  # Warfarin: 2141-05-26 17:00, entered 2141-05-28 16:42
    ],
)
def test_attack14_no_visible_prescription_was_entered_after_the_cutoff(
    demo_store: Path, demo_reader: StoreReader, subject: int, cutoff: datetime
) -> None:
    with build_episode(demo_reader, EpisodeKey(subject, cutoff)) as ep:
        (shown,) = ep.execute(
            "SELECT list(DISTINCT pharmacy_id) FROM (SELECT pharmacy_id FROM prescriptions "
            "UNION ALL SELECT pharmacy_id FROM pharmacy) WHERE pharmacy_id IS NOT NULL"
        ).rows[0]
    con = connect_store(demo_store)
    try:
        late = con.execute(
            "SELECT count(*) FROM hosp.pharmacy WHERE subject_id = ? AND list_contains(?, pharmacy_id) "
            "AND entertime >= ?",
            [subject, shown, cutoff],
        ).fetchall()[0][0]
    finally:
        con.close()
    assert late == 0, f"{late} visible orders were entered into the pharmacy system after the cutoff"
