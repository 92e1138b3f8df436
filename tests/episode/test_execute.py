"""Episode.execute (caps, types, params, time limit), table lookup, candidates, build errors."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from clinseek.episode import Episode, EpisodeError, EpisodeKey, EpisodeTimeout, build_episode
from clinseek.errors import StoreError
from clinseek.store import open_store
from policy.crafted import S, T


def test_row_cap_announces_the_cut(sealed: Episode) -> None:
    full = sealed.execute("SELECT * FROM range(10)", max_rows=20)
    assert (len(full.rows), full.truncated, full.row_count) == (10, False, 10)
    cut = sealed.execute("SELECT * FROM range(10)", max_rows=3)
    assert (cut.rows, cut.truncated, cut.row_count) == ([(0,), (1,), (2,)], True, None)


def test_typed_columns_and_params(sealed: Episode) -> None:
    result = sealed.execute(
        "SELECT labevent_id, charttime, valuenum FROM labevents WHERE labevent_id = ?", [1]
    )
    assert result.columns == ("labevent_id", "charttime", "valuenum")
    assert result.types == ("INTEGER", "TIMESTAMP", "DOUBLE")
    assert result.rows == [(1, datetime(2150, 6, 10, 8, 0), 1.1)]


def test_long_query_is_interrupted(sealed: Episode) -> None:
    with pytest.raises(EpisodeTimeout) as info:  # the query would run for hours: raising proves the interrupt
        sealed.execute(
            "SELECT count(*) FROM range(100000000) a, range(100000000) b WHERE a.range + b.range = -1",
            timeout_s=0.3,
        )
    assert info.value.timeout_s == 0.3
    assert sealed.execute("SELECT 1").rows == [(1,)]  # the episode is still usable


def test_table_lookup_qualified_and_bare(sealed: Episode) -> None:
    assert sealed.has_table("hosp.labevents") and sealed.has_table("labevents")
    assert sealed.qualify("d_items") == "icu.d_items"
    assert sealed.qualify("labevents_candidates") == "candidates.labevents_candidates"
    assert not sealed.has_table("chexpert") and not sealed.has_table("nope")
    counts = sealed.table_counts()
    assert counts["hosp.labevents"] == 2 and "candidates.labevents_candidates" not in counts
    assert next(iter(counts)) == "hosp.patients"


def test_candidate_tables(sealed: Episode) -> None:
    assert sealed.candidate_tables() == ("candidates.labevents_candidates",)
    assert sealed.execute("SELECT candidate FROM labevents_candidates").rows == [
        ("Creatinine",),
        ("Lactate",),
    ]


@pytest.mark.parametrize(
    ("candidates", "match"),
    [
        ({"Bad Name": ["x"]}, "lower-case identifier"),
        ({"x; DROP": ["x"]}, "lower-case identifier"),
        ({"labevents": "Creatinine"}, "one string"),
        ({"labevents": ["a", 3]}, "expected strings"),
    ],
)
def test_bad_candidates_are_refused(small_store: Path, candidates: dict[str, object], match: str) -> None:
    with pytest.raises(EpisodeError, match=match):
        build_episode(small_store, EpisodeKey(S, T), candidates=candidates)  # type: ignore[arg-type]


def test_unknown_subject_is_refused(small_store: Path) -> None:
    with pytest.raises(EpisodeError, match=r"subject_id 999 is not in hosp\.patients"):
        build_episode(small_store, EpisodeKey(999, T))


def test_missing_store_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such store file"):
        build_episode(tmp_path / "none.duckdb", EpisodeKey(S, T))


def test_store_object_and_context_manager(small_store: Path) -> None:
    with build_episode(open_store(small_store), EpisodeKey(S, T)) as ep:
        assert ep.key.subject_id == S and ep.policy.version == "clinseek-text-v1"
        assert "subject_id=1," in repr(ep)
    assert ep.closed
    with pytest.raises(EpisodeError, match="closed"):
        ep.execute("SELECT 1")
    ep.close()  # idempotent


def test_episode_cutoff_before_any_event_is_empty_but_complete(small_store: Path) -> None:
    with build_episode(small_store, EpisodeKey(S, datetime(2100, 1, 1))) as ep:
        counts = ep.table_counts()
        assert counts["hosp.patients"] == 1
        assert all(
            n == 0
            for name, n in counts.items()
            if name != "hosp.patients" and "d_" not in name and name not in ("hosp.provider", "icu.caregiver")
        )
        assert ep.execute("SELECT dod FROM patients").rows == [(None,)]


def test_a_store_that_does_not_match_the_registry_is_refused_and_nothing_kept_open(
    small_store: Path, tmp_path: Path
) -> None:
    import shutil

    import duckdb

    broken = tmp_path / "broken.duckdb"
    shutil.copy(small_store, broken)
    con = duckdb.connect(str(broken))
    con.execute("ALTER TABLE hosp.labevents DROP COLUMN storetime")
    con.close()
    with pytest.raises(StoreError, match=r"broken\.duckdb: hosp\.labevents has no column storetime"):
        build_episode(broken, EpisodeKey(S, T))
    assert str(broken) not in _open_files()  # the failed open kept no reader


def _open_files() -> set[str]:
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("needs /proc to list open files")
    out = set()
    for fd in fds.iterdir():
        try:
            out.add(str(fd.readlink()))
        except OSError:
            continue
    return out
