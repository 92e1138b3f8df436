"""attack16 on a live PostgreSQL source, as on the DuckDB store (one registry definition, two dialects):
``emar_detail`` rows wait for their administration's documentation (its eMAR storetime): 10002495's four
administrations charted at 2141-05-28 16:00 are stored at 17:28-17:29; their detail rows (2, 2, 2 and 1: Warfarin
not given) are hidden at 17:00 and shown at 17:30. A consult's status rows wait for its status time."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode, open_store_reader
from pgserver import PgDatabase

psycopg = pytest.importorskip("psycopg")

_SQL = (
    "SELECT e.medication, e.event_txt IS NULL, (SELECT count(*) FROM emar_detail d WHERE d.emar_id = e.emar_id) "
    "FROM emar e WHERE e.charttime = TIMESTAMP '2141-05-28 16:00' ORDER BY e.medication"
)


@pytest.fixture(scope="module")
def pg_reader(pg_demo: PgDatabase) -> Iterator[StoreReader]:
    with open_store_reader(pg_demo.reader_url) as reader:
        yield reader


def test_attack16_postgres_hides_detail_rows_until_the_administration_is_stored(pg_reader: StoreReader,
                                                                                demo_reader: StoreReader) -> None:
    shown = {}
    for cutoff in (datetime(2141, 5, 28, 17, 0), datetime(2141, 5, 28, 17, 30)):
        key = EpisodeKey(10002495, cutoff)
        with build_episode(pg_reader, key) as live, build_episode(demo_reader, key) as stored:
            shown[cutoff] = live.execute(_SQL).rows
            assert shown[cutoff] == stored.execute(_SQL).rows
            assert live.table_counts() == stored.table_counts()
    meds = ["Captopril", "Heparin", "Metoprolol Tartrate", "Warfarin"]
    # before their documentation (17:28-17:29) the administrations are not shown at all (session 16; at attack16
    # they showed with event_txt NULL and no detail row)
    assert list(shown.values()) == [[],
                                    [(m, False, n) for m, n in zip(meds, (2, 2, 2, 1), strict=True)]]


_CONSULT = (
    "SELECT d.field_name, d.field_value FROM poe_detail d JOIN poe p ON p.poe_id = d.poe_id "
    "WHERE p.ordertime = TIMESTAMP '2192-05-13 12:51:44' AND p.order_type = 'Consults' ORDER BY 1"
)


def test_attack16_postgres_shows_a_consult_status_row_once_answered(pg_reader: StoreReader,
                                                                   demo_reader: StoreReader) -> None:
    """10015860's consult ordered 2192-05-13 12:51:44, accepted at 18:01:03 (the status time read from text on the
    server: regexp and cast as PostgreSQL writes them)."""
    shown = {}
    for cutoff in (datetime(2192, 5, 13, 15, 0), datetime(2192, 5, 13, 18, 2)):
        key = EpisodeKey(10015860, cutoff)
        with build_episode(pg_reader, key) as live, build_episode(demo_reader, key) as stored:
            shown[cutoff] = live.execute(_CONSULT).rows
            assert shown[cutoff] == stored.execute(_CONSULT).rows
            assert live.table_counts() == stored.table_counts()
    assert [[name for name, _ in rows] for rows in shown.values()] == [
        ["Level of Urgency"], ["Consult Status", "Consult Status Time", "Level of Urgency"]
    ]
