"""attack15: the per-episode renumbering of MIMIC's per-patient counters (``clinseek.schema.Sequence``) on crafted
stores (copies of the MIMIC-IV demo store, edited).

- An id whose text does not end in its counter (``<subject>-<n>`` with a suffix): the renumbering replaced the
  trailing digits only, so ``10000032-7x`` was shown as it is in the store, the original counter (7: six orders
  entered before it, none of them visible at the cutoff) included. The shown id is now built from the subject
  and the new number alone.
- A store without the owner table (hosp.poe, hosp.emar): the columns naming its rows are NULL, no read fails.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from clinseek.episode import EpisodeKey, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY

_SUBJECT = 10000032
_POE_REFS = (
    ("poe", "poe_id"), ("poe_detail", "poe_id"), ("prescriptions", "poe_id"), ("pharmacy", "poe_id"),
    ("emar", "poe_id"), ("poe", "discontinue_of_poe_id"), ("poe", "discontinued_by_poe_id"),
)


def _rows(ep, sql: str) -> list[tuple]:
    r = ep.execute(sql)
    return r.rows if hasattr(r, "rows") else r.fetchall()


@pytest.fixture(scope="module")
def suffixed_store(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, datetime]:
    """The demo store with the subject's first order (by ordertime) renamed ``<id>x`` wherever it is named."""
    out = tmp_path_factory.mktemp("attack15") / "suffixed.duckdb"
    shutil.copyfile(demo_store, out)
    con = duckdb.connect(str(out))
    try:
        first = con.execute(
            "SELECT poe_id, ordertime FROM hosp.poe WHERE subject_id = ? ORDER BY ordertime, poe_seq LIMIT 3", [_SUBJECT]
        ).fetchall()
        assert first[0][0] == f"{_SUBJECT}-7"  # six orders entered before it are placed later
        # attack21: an order is known no earlier than its admission's admittime (these were placed in the ED)
        (admitted,) = con.execute(
            "SELECT a.admittime FROM hosp.admissions a JOIN hosp.poe p USING (hadm_id) WHERE p.poe_id = ?", [first[0][0]]
        ).fetchone()
        for table, column in _POE_REFS:
            con.execute(f"UPDATE hosp.{table} SET {column} = ? WHERE {column} = ?", [first[0][0] + "x", first[0][0]])
    finally:
        con.close()
    return out, max(first[2][1], admitted) + timedelta(minutes=1)


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack15_an_id_not_ending_in_its_counter_is_renumbered(
    suffixed_store: tuple[Path, datetime], policy: str
) -> None:
    store, cutoff = suffixed_store
    with build_episode(store, EpisodeKey(_SUBJECT, cutoff, policy=policy)) as ep:
        shown = _rows(ep, "SELECT poe_id, poe_seq FROM poe ORDER BY ordertime, poe_seq")
        # the eight orders placed in the ED (10000032-7 to -14), shown from the admittime 2180-05-06 22:23 (attack21)
        assert [seq for _, seq in shown] == list(range(1, 9))
        # was ('10000032-7x', 1): the store's id, its original counter 7 included
        assert [pid for pid, _ in shown] == [f"{_SUBJECT}-{n}" for n in range(1, 9)]
        for table in ("poe_detail", "prescriptions", "pharmacy", "emar"):
            named = {pid for (pid,) in _rows(ep, f"SELECT DISTINCT poe_id FROM {table} WHERE poe_id IS NOT NULL")}
            assert not any(p.endswith("x") for p in named), (table, named)


@pytest.fixture(scope="module")
def store_without(demo_store: Path, tmp_path_factory: pytest.TempPathFactory):
    made: dict[str, Path] = {}

    def without(table: str) -> Path:
        if table not in made:
            out = tmp_path_factory.mktemp("attack15") / f"without_{table.replace('.', '_')}.duckdb"
            shutil.copyfile(demo_store, out)
            con = duckdb.connect(str(out))
            try:
                con.execute(f"DROP TABLE {table}")
                con.execute("DELETE FROM clinseek_meta.table_info WHERE table_name = ?", [table])
            finally:
                con.close()
            made[table] = out
        return made[table]

    return without


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
@pytest.mark.parametrize(
    ("owner", "reads"),
    [
        ("hosp.poe", {"prescriptions": ("poe_id", "poe_seq"), "pharmacy": ("poe_id",), "emar": ("poe_id",)}),
        ("hosp.emar", {"poe": ("poe_id", "poe_seq"), "pharmacy": ("poe_id",)}),
    ],
)
def test_attack15_a_store_without_the_owner_shows_null(store_without, owner: str, reads: dict, policy: str) -> None:
    store = store_without(owner)
    with build_episode(store, EpisodeKey(_SUBJECT, datetime(2180, 8, 1), policy=policy)) as ep:
        for table, columns in reads.items():
            counts = _rows(ep, f"SELECT count(*), {', '.join(f'count({c})' for c in columns)} FROM {table}")[0]
            assert counts[0] > 0, table
            if owner == "hosp.poe":
                assert all(n == 0 for n in counts[1:]), (table, counts)
            else:
                assert all(n == counts[0] or table == "pharmacy" for n in counts[1:]), (table, counts)
