"""An episode built without a database (``queries=False``, what Curated Input uses) reads exactly what a sealed
episode reads (inventory, event times, timelines), takes no sealed database from its reader and runs no query."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from clinseek.episode import EpisodeKey, StoreReader, build_episode, open_store_reader
from clinseek.errors import EpisodeError, StoreError
from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.store import connect_store


@pytest.fixture(scope="module")
def reader(demo_store: Path) -> Iterator[StoreReader]:
    with open_store_reader(demo_store) as opened:
        yield opened


def _keys(store: Path) -> list[EpisodeKey]:
    """Two patients' last admissions: inside the stay (both policies, target hidden or not) and after discharge."""
    con = connect_store(store)
    try:
        stays = con.execute(
            "SELECT subject_id, hadm_id, admittime, dischtime FROM hosp.admissions WHERE subject_id IN "
            "(10035631, 10015931) QUALIFY row_number() OVER (PARTITION BY subject_id ORDER BY admittime DESC) = 1 "
            "ORDER BY subject_id"
        ).fetchall()
    finally:
        con.close()
    keys = []
    for subject_id, hadm_id, admit, disch in stays:
        inside = admit + (disch - admit) / 2
        keys += [
            EpisodeKey(subject_id, inside, TEXT_POLICY),
            EpisodeKey(subject_id, inside, MM_POLICY, target_hadm_id=hadm_id),
            EpisodeKey(subject_id, disch + dt.timedelta(seconds=1), TEXT_POLICY),
        ]
    return keys


def test_without_a_database_the_episode_reads_the_same(demo_store: Path, reader: StoreReader) -> None:
    for key in _keys(demo_store)[1:3]:  # the target admission hidden (MM policy), and after discharge
        with build_episode(reader, key) as sealed, build_episode(reader, key, queries=False) as bare:
            assert bare.table_counts() == sealed.table_counts()
            assert bare.candidate_tables() == sealed.candidate_tables() == ()
            for name, rows in sealed.table_counts().items():
                times = sealed.event_times(name)
                assert bare.event_times(name) == times, name
                if times is None or not rows:
                    continue
                middle = times[len(times) // 2].as_py()
                expected = sealed.timeline_rows(name, since=middle)
                assert bare.timeline_rows(name, since=middle) == expected, (key, name, middle)
                assert bare.timeline(name, until=middle).equals(sealed.timeline(name, until=middle)), (key, name)


def test_without_a_database_nothing_is_acquired_wiped_or_queried(
    demo_store: Path, reader: StoreReader, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(*_: object) -> None:
        raise AssertionError("a sealed database was taken or given back")

    monkeypatch.setattr(reader.sealed, "acquire", refused)
    monkeypatch.setattr(reader.sealed, "release", refused)
    key = _keys(demo_store)[0]
    episode = build_episode(reader, key, queries=False)
    with pytest.raises(EpisodeError, match="queries=False"):
        episode.execute("SELECT count(*) FROM labevents", tables=["labevents"])
    assert episode.timeline_rows("hosp.admissions").rows
    episode.close()
    with pytest.raises(EpisodeError, match="closed"):
        episode.execute("SELECT 1")
    with pytest.raises(EpisodeError, match="closed"):
        episode.timeline_rows("hosp.admissions")


def test_without_a_database_no_candidate_tables(reader: StoreReader, demo_store: Path) -> None:
    with pytest.raises(EpisodeError, match="queries=False"):
        build_episode(reader, _keys(demo_store)[0], candidates={"diagnoses_ccs": ["Sepsis"]}, queries=False)


def test_an_episode_of_its_own_reader_closes_it_without_a_database(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clinseek.episode import _build

    opened: list[StoreReader] = []

    def opening(store: Path) -> StoreReader:
        opened.append(open_store_reader(store))
        return opened[-1]

    monkeypatch.setattr(_build, "open_store_reader", opening)
    with build_episode(demo_store, _keys(demo_store)[0], queries=False) as episode:
        assert episode.timeline_rows("hosp.admissions").rows
        opened[0].check_open()
    with pytest.raises(StoreError, match="closed"):
        opened[0].check_open()
