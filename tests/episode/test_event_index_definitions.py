"""An event index written under an older definition of when a table's rows become known is never read for it.

Session 14 moved the event time of ``hosp.prescriptions`` and ``hosp.pharmacy`` (a back-dated prescription is
known once its order is entered). A store ingested before keeps index rows timed by ``starttime``; read as they
are, the build's inventory and the loaded table disagree (the episode refused every question with a back-dated
prescription: "has 525 visible rows, 527 when the episode was built (was the store changed?)"). The index now
records each table's definition (``clinseek_meta.event_index_definitions``); a table whose definition is not
this registry's, or a store without the record, is counted per table until the next ingest rewrites the index.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.episode import EpisodeKey, build_episode, open_store_reader
from clinseek.store import EVENT_INDEX, event_index_current, finished_tables, ingest

_DEFINITIONS = "clinseek_meta.event_index_definitions"
_RX = "hosp.prescriptions"
# a Fluconazole order started 2137-08-12 10:00 and entered into the pharmacy system 2137-08-16 10:08 (demo)
_BACKDATED = EpisodeKey(10003400, dt.datetime(2137, 8, 14))
_COUNT = "SELECT count(*) FROM prescriptions WHERE drug = 'Fluconazole' AND starttime = '2137-08-12 10:00:00'"


def _as_written_before(store: Path) -> None:
    """``store``'s index as the previous registry wrote it: prescriptions timed by their own starttime."""
    with duckdb.connect(str(store)) as con:
        con.execute(f"DELETE FROM {EVENT_INDEX} WHERE table_name = '{_RX}'")
        con.execute(f"INSERT INTO {EVENT_INDEX} SELECT '{_RX}', subject_id, starttime, hadm_id, NULL, NULL, NULL "
                    f"FROM {_RX} WHERE starttime IS NOT NULL")
        con.execute(f"UPDATE {_DEFINITIONS} SET definition = 'CAST(t.starttime AS TIMESTAMP)' WHERE table_name = '{_RX}'")
        assert not event_index_current(con, finished_tables(con))


@pytest.fixture()
def older(demo_store: Path, tmp_path: Path) -> Path:
    out = tmp_path / "older.duckdb"
    shutil.copy(demo_store, out)
    _as_written_before(out)
    return out


def test_a_table_indexed_by_an_older_definition_is_counted_per_table(older: Path, demo_store: Path) -> None:
    with open_store_reader(older) as reader, open_store_reader(demo_store) as current:
        assert _RX not in reader.indexed and reader.indexed == current.indexed - {_RX}
        with build_episode(reader, _BACKDATED) as ep, build_episode(current, _BACKDATED) as want:
            assert ep.table_counts() == want.table_counts()
            assert ep.execute(_COUNT).rows == want.execute(_COUNT).rows == [(0,)]  # entered after the cutoff


def test_data_info_says_so_and_the_next_ingest_rewrites_the_index(older: Path, demo_store: Path,
                                                                     shared_data: Path) -> None:
    said = CliRunner().invoke(app, ["data", "info", str(older)], terminal_width=400)
    assert said.exit_code == 0 and "an older definition of when their rows become known" in " ".join(said.output.split())
    report = ingest(older, mimic_iv=shared_data / "mimic-iv-demo-2.2", ed=shared_data / "mimic-iv-ed-demo-2.2",
                    progress=False)
    assert {t.status for t in report.tables} == {"skipped"}  # nothing re-read: only the index rewritten
    with duckdb.connect(str(older), read_only=True) as con, duckdb.connect(str(demo_store), read_only=True) as new:
        assert event_index_current(con, finished_tables(con))
        index = f"SELECT * FROM {EVENT_INDEX} ORDER BY ALL"
        assert con.execute(index).fetchall() == new.execute(index).fetchall()
    said = CliRunner().invoke(app, ["data", "info", str(older)], terminal_width=400)
    assert said.exit_code == 0 and "older definition" not in " ".join(said.output.split())


def test_a_store_without_the_record_is_read_per_table(demo_store: Path, tmp_path: Path) -> None:
    """Written before the definitions were recorded: no table's index rows can be vouched for."""
    old = tmp_path / "unrecorded.duckdb"
    shutil.copy(demo_store, old)
    with duckdb.connect(str(old)) as con:
        con.execute(f"DROP TABLE {_DEFINITIONS}")
        assert not event_index_current(con, finished_tables(con))
    with open_store_reader(old) as reader, open_store_reader(demo_store) as current:
        assert reader.indexed == frozenset() and current.indexed
        with build_episode(reader, _BACKDATED) as ep, build_episode(current, _BACKDATED) as want:
            assert ep.table_counts() == want.table_counts()


def test_a_run_on_such_a_store_says_it_reads_slower_and_how_to_fix_it(older: Path, demo_store: Path,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    """``clinseek run``'s store check warns once, naming the store and the ingest that rewrites the index (a store
    ingested before a policy change is read with the policy's joins: the same rows at about twice the CPU)."""
    from clinseek.runner._store_check import check_store_subjects

    with caplog.at_level("WARNING", logger="clinseek.runner"):
        assert check_store_subjects(demo_store, [_BACKDATED.subject_id]) == 0
    assert not caplog.records
    with caplog.at_level("WARNING", logger="clinseek.runner"):
        assert check_store_subjects(older, [_BACKDATED.subject_id]) == 0
    (record,) = caplog.records
    assert "older clinseek" in record.getMessage() and f"clinseek data ingest --out {older}" in record.getMessage()
