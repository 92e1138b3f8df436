"""attack17 on a live PostgreSQL source, as on the DuckDB store: a pending culture keeps one row per specimen, its
test NULL with the result (10004235's blood culture 139903, drawn 2196-02-24 12:40: at 2196-02-25 03:00 its
'Anaerobic/Aerobic Bottle Gram Stain' rows, present only because a bottle flagged positive, showed by name)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode, open_store_reader
from pgserver import PgDatabase

psycopg = pytest.importorskip("psycopg")

_SQL = ("SELECT microevent_id, spec_type_desc, test_seq, test_itemid, test_name, org_name FROM microbiologyevents "
        "WHERE micro_specimen_id = 139903")


@pytest.fixture(scope="module")
def pg_reader(pg_demo: PgDatabase) -> Iterator[StoreReader]:
    with open_store_reader(pg_demo.reader_url) as reader:
        yield reader


def test_attack17_postgres_names_no_pending_test(pg_reader: StoreReader, demo_reader: StoreReader) -> None:
    shown = {}
    for cutoff in (datetime(2196, 2, 25, 3, 0), datetime(2196, 2, 25, 4, 0)):
        key = EpisodeKey(10004235, cutoff)
        with build_episode(pg_reader, key) as live, build_episode(demo_reader, key) as stored:
            shown[cutoff] = sorted(live.execute(_SQL).rows, key=repr)
            assert shown[cutoff] == sorted(stored.execute(_SQL).rows, key=repr)
            assert live.table_counts() == stored.table_counts()
    # 03:00: nothing resulted, one nameless row; 04:00: the anaerobic stain resulted at 03:56 (its own row, named),
    # and the specimen, having a resulted test, shows no pending row (session 19, attack19)
    assert shown[datetime(2196, 2, 25, 3, 0)] == [(None, "BLOOD CULTURE", None, None, None, None)]
    assert shown[datetime(2196, 2, 25, 4, 0)] == [
        (1, "BLOOD CULTURE", None, 90204, "Anaerobic Bottle Gram Stain", None),  # test_seq never shown (its 2 counted)
    ]
