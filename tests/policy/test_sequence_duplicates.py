"""A counter's owner with a duplicated id (not MIMIC: a hand-made or damaged store): the store's numbers and the
per-statement numbering (PostgreSQL, stores ingested before the numbers were kept) agree, and no row naming the
duplicated id is shown twice."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from clinseek.episode import open_store_reader
from clinseek.policy import EpisodeKey, get_policy
from clinseek.schema import get_table
from clinseek.store import write_event_index

from .crafted import S, T


def test_a_duplicated_owner_id_gives_one_number_and_no_repeated_rows(crafted_store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "duplicated.duckdb"
    shutil.copy(crafted_store, copy)
    with duckdb.connect(str(copy)) as con:  # order 1-3 (2150-01-02) entered twice, the copy a day later
        con.execute("INSERT INTO hosp.poe SELECT * REPLACE (ordertime + INTERVAL 1 DAY AS ordertime) FROM hosp.poe "
                    "WHERE poe_id = '1-3'")
        write_event_index(con)
    key = EpisodeKey(S, T)
    policy = get_policy(key.policy)
    with open_store_reader(copy) as reader:
        present, stored = reader.present, reader.instants
    assert stored["hosp.poe_detail"].sequences  # the store keeps the numbers: both paths are compared
    with duckdb.connect(str(copy), read_only=True) as con:
        for name in ("hosp.poe", "hosp.poe_detail", "hosp.prescriptions", "hosp.pharmacy", "hosp.emar"):
            table = get_table(name)
            shown = []
            for instants in (stored, None):
                sql, params = policy.visible_select(table, key, present=present, instants=instants)
                shown.append(sorted(con.execute(sql, params).fetchall(), key=repr))
            assert shown[0] == shown[1], name
            raw = con.execute(f"SELECT count(*) FROM {name} WHERE subject_id = ?", [S]).fetchall()[0][0]
            assert len(shown[0]) <= raw, name  # never more rows than the store has
