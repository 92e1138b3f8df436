"""leak14b on a live PostgreSQL source: the policy's PostgreSQL statements time a prescription by its pharmacy
order's entry as the DuckDB store does (one registry definition, two dialects): a back-dated Fluconazole order
of 10003400 (starttime 2137-08-12 10:00, entered 2137-08-16 10:08) is hidden until entered, then shown."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode, open_store_reader
from pgserver import PgDatabase

psycopg = pytest.importorskip("psycopg")

_ENTERED = datetime(2137, 8, 16, 10, 8)
_SQL = (
    "SELECT (SELECT count(*) FROM prescriptions WHERE drug ILIKE 'fluconazole%' AND starttime = "
    "TIMESTAMP '2137-08-12 10:00:00'), (SELECT count(*) FROM pharmacy WHERE medication ILIKE 'fluconazole%' "
    "AND starttime = TIMESTAMP '2137-08-12 10:00:00')"
)


@pytest.fixture(scope="module")
def pg_reader(pg_demo: PgDatabase) -> Iterator[StoreReader]:
    with open_store_reader(pg_demo.reader_url) as reader:
        yield reader


def test_attack14_postgres_hides_a_backdated_prescription_until_entered(pg_reader: StoreReader,
                                                                       demo_reader: StoreReader) -> None:
    shown = {}
    for cutoff in (_ENTERED - timedelta(minutes=1), _ENTERED + timedelta(minutes=1)):
        key = EpisodeKey(10003400, cutoff)
        with build_episode(pg_reader, key) as live, build_episode(demo_reader, key) as stored:
            shown[cutoff] = live.execute(_SQL).rows[0]
            assert shown[cutoff] == stored.execute(_SQL).rows[0]
            assert live.table_counts() == stored.table_counts()
    assert list(shown.values()) == [(0, 0), (1, 1)]
