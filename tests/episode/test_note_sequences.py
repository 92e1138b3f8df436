"""notes16: MIMIC-IV-Note's per-patient note counters renumbered in each episode (session 15's open item 1).

MIMIC numbers a patient's notes per note type (``note_seq``, by chart time, ids such as ``10000032-DS-21`` start
above 1) and writes ``note_id`` = ``<subject_id>-<note_type>-<note_seq>``. A note is visible from its signing
time, so a report charted before the cutoff but signed after it left a gap between the visible numbers (and the
numbering counts notes never released). The episode now shows the visible notes of each type numbered ``1..n`` by
event time, the id ``<subject_id>-<note_type>-<n>``, and the detail tables' ``note_id`` and note-naming
``field_value`` (``addendum_note_id``, ``parent_note_id``) as the id of the note they name, NULL until it is
visible. Built on a crafted store (no open note data here).
"""

from __future__ import annotations

import re
import shutil
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import duckdb
import pytest

from clinseek.bench import render_text_timeline
from clinseek.episode import EpisodeKey, build_episode, open_store_reader
from clinseek.policy import MM_POLICY, TEXT_POLICY, get_policy
from clinseek.schema import get_table
from clinseek.store import INSTANT_PREFIX
from clinseek.tools import Limits, ToolContext, call_tool
from policy.crafted import write_store

P = 10000032
T = datetime(2180, 6, 10, 12, 0)
"""The cutoff: RR-15 is charted before it and signed after it; RR-16, charted later, is signed before it."""
QUIET = datetime(2180, 6, 10, 14, 0)
"""A later cutoff with no note event since ``T`` (the next, AR-4's signing, is at 15:00)."""
LATER = datetime(2180, 6, 11, 10, 0)
"""After RR-15, AR-4 and DS-22 are signed."""
_NOTE_TABLES = ("note.discharge", "note.discharge_detail", "note.radiology", "note.radiology_detail")


def ts(text: str) -> datetime:
    return datetime.fromisoformat(f"2180-{text}")


def _note(table: str, seq: int, kind: str, chart: str, signed: str | None, text: str, hadm: int | None = 22841357,
          note_id: str | None = None) -> dict[str, Any]:
    return dict(note_id=note_id or f"{P}-{kind}-{seq}", subject_id=P, hadm_id=hadm, note_type=kind, note_seq=seq,
                charttime=ts(chart), storetime=ts(signed) if signed else None, text=text)


def _field(note: str, name: str, value: str, ordinal: int = 1) -> dict[str, Any]:
    return dict(note_id=f"{P}-{note}", subject_id=P, field_name=name, field_value=value, field_ordinal=ordinal)


ROWS: dict[str, list[dict[str, Any]]] = {
    "hosp.patients": [dict(subject_id=P, gender="F", anchor_age=52, anchor_year=2180, anchor_year_group="2014 - 2016")],
    "hosp.admissions": [
        dict(subject_id=P, hadm_id=22595853, admittime=ts("05-06 19:17"), dischtime=ts("05-07 17:15"),
             admission_type="URGENT"),
        dict(subject_id=P, hadm_id=22841357, admittime=ts("06-04 10:00"), dischtime=ts("06-12 14:00"),
             admission_type="EW EMER."),
    ],
    "note.radiology": [
        _note("r", 14, "RR", "06-01 10:00", "06-01 12:00", "CHEST (PA AND LAT): no acute process.", hadm=None),
        # charted before T, signed after it: the leak's gap
        _note("r", 15, "RR", "06-09 08:00", "06-11 09:00", "CT ABDOMEN: abscess.", hadm=22841357),
        # charted after RR-15, signed before T; its id does not end in its counter (30)
        _note("r", 30, "RR", "06-09 20:00", "06-09 22:00", "CT HEAD: no hemorrhage.", note_id=f"{P}-RR-16"),
        _note("r", 17, "RR", "06-12 09:00", "06-12 11:00", "CHEST PORTABLE: effusion."),
        _note("r", 3, "AR", "06-02 08:00", "06-02 09:00", "ADDENDUM: comparison with prior."),  # of RR-14
        _note("r", 4, "AR", "06-10 14:30", "06-10 15:00", "ADDENDUM: small bleed on review."),  # of RR-16, after T
    ],
    "note.radiology_detail": [
        _field("RR-14", "exam_name", "CHEST (PA AND LAT)"),
        _field("RR-14", "cpt_code", "71046"),
        _field("RR-14", "addendum_note_id", f"{P}-AR-3"),
        _field("RR-15", "exam_name", "CT ABDOMEN"),
        _field("RR-16", "exam_name", "CT HEAD"),
        _field("RR-16", "addendum_note_id", f"{P}-AR-4"),
        _field("RR-16", "author", f"{P}-RR-99"),  # not a naming field: shown as stored, whatever it looks like
        _field("AR-3", "parent_note_id", f"{P}-RR-14"),
        _field("AR-4", "parent_note_id", f"{P}-RR-16"),
        _field("RR-17", "exam_name", "CHEST PORTABLE"),
    ],
    "note.discharge": [
        _note("d", 21, "DS", "05-07 00:00", "05-09 15:26", "Discharged home.", hadm=22595853),
        _note("d", 22, "DS", "06-05 00:00", "06-11 08:00", "Interim summary.", hadm=22841357),  # signed after T
        _note("d", 5, "AD", "05-09 16:00", "05-10 09:00", "Addendum: follow-up.", hadm=22595853),
    ],
    "note.discharge_detail": [
        _field("DS-21", "author", "Dr A"),
        _field("DS-21", "addendum_note_id", f"{P}-AD-5"),
        _field("AD-5", "parent_note_id", f"{P}-DS-21"),
        _field("DS-22", "author", "Dr B"),
    ],
}
ORIGINAL_IDS = sorted({r["note_id"] for t in ("note.radiology", "note.discharge") for r in ROWS[t]})


@pytest.fixture(scope="module")
def note_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_store(tmp_path_factory.mktemp("notes16") / "notes.duckdb", ROWS, "tests/episode/test_note_sequences.py")


@pytest.fixture(scope="module")
def fallback_store(note_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store without the numbers it keeps per row (as one ingested before them): every statement numbers."""
    out = tmp_path_factory.mktemp("notes16") / "fallback.duckdb"
    shutil.copyfile(note_store, out)
    with duckdb.connect(str(out)) as con:
        for name in _NOTE_TABLES:
            schema, table = name.split(".")
            for (column,) in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND "
                "starts_with(column_name, ?)", [schema, table, f"{INSTANT_PREFIX}seq_"]
            ).fetchall():
                con.execute(f'ALTER TABLE {name} DROP COLUMN "{column}"')
    return out


def _rows(ep: Any, sql: str) -> list[tuple[Any, ...]]:
    return ep.execute(sql).rows


def _notes(ep: Any, table: str) -> dict[str, tuple[int, str]]:
    """Shown id -> (shown counter, text)."""
    return {i: (n, text) for i, n, text in _rows(ep, f"SELECT note_id, note_seq, text FROM {table}")}


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_a_report_signed_after_the_cutoff_leaves_no_gap(note_store: Path, policy: str) -> None:
    with build_episode(note_store, EpisodeKey(P, T, policy=policy)) as ep:
        # RR-14 and RR-16 visible, RR-15 (charted between them, signed after T) not: numbered 1, 2 by signing time
        assert _notes(ep, "note.radiology") == {
            f"{P}-RR-1": (1, "CHEST (PA AND LAT): no acute process."),
            f"{P}-RR-2": (2, "CT HEAD: no hemorrhage."),
            f"{P}-AR-1": (1, "ADDENDUM: comparison with prior."),
        }
        assert _notes(ep, "note.discharge") == {
            f"{P}-DS-1": (1, "Discharged home."), f"{P}-AD-1": (1, "Addendum: follow-up."),
        }
        # every shown id is <subject>-<type>-<shown counter>, whatever the store's text (RR-16 has counter 30)
        for table in ("note.radiology", "note.discharge"):
            assert _rows(ep, f"SELECT count(*) FROM {table} WHERE note_id <> CAST(subject_id AS VARCHAR) || '-' || "
                             "note_type || '-' || CAST(note_seq AS VARCHAR)") == [(0,)]


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_detail_ids_and_note_naming_values_follow_the_notes(note_store: Path, policy: str) -> None:
    with build_episode(note_store, EpisodeKey(P, T, policy=policy)) as ep:
        shown = sorted(_rows(ep, "SELECT note_id, field_name, field_value FROM note.radiology_detail"), key=repr)
        assert shown == sorted([
            (f"{P}-RR-1", "exam_name", "CHEST (PA AND LAT)"),
            (f"{P}-RR-1", "cpt_code", "71046"),
            (f"{P}-RR-1", "addendum_note_id", f"{P}-AR-1"),  # the addendum is visible: its shown id
            (f"{P}-RR-2", "exam_name", "CT HEAD"),
            # RR-2's addendum_note_id row comes with its addendum, signed after T (attack17: its presence told one was
            # to come)
            (f"{P}-RR-2", "author", f"{P}-RR-99"),  # no naming field: as stored
            (f"{P}-AR-1", "parent_note_id", f"{P}-RR-1"),  # the parent's shown id
        ], key=repr)
        shown = sorted(_rows(ep, "SELECT note_id, field_name, field_value FROM note.discharge_detail"), key=repr)
        assert shown == sorted([
            (f"{P}-DS-1", "author", "Dr A"),
            (f"{P}-DS-1", "addendum_note_id", f"{P}-AD-1"),
            (f"{P}-AD-1", "parent_note_id", f"{P}-DS-1"),
        ], key=repr)
        # every id a detail row names is an id its note table shows
        for detail, notes in (("note.radiology_detail", "note.radiology"), ("note.discharge_detail", "note.discharge")):
            assert _rows(ep, f"SELECT count(*) FROM {detail} d WHERE (d.note_id NOT IN (SELECT note_id FROM {notes})) "
                             f"OR (d.field_name IN ('addendum_note_id', 'parent_note_id') AND d.field_value IS NOT NULL "
                             f"AND d.field_value NOT IN (SELECT note_id FROM {notes}))") == [(0,)]


def test_the_addendum_and_the_late_report_appear_once_signed(note_store: Path) -> None:
    with build_episode(note_store, EpisodeKey(P, LATER)) as ep:
        assert {i: n for i, (n, _) in _notes(ep, "note.radiology").items()} == {
            f"{P}-RR-1": 1, f"{P}-RR-2": 2, f"{P}-RR-3": 3, f"{P}-AR-1": 1, f"{P}-AR-2": 2,
        }
        assert _rows(ep, "SELECT text FROM note.radiology WHERE note_id = '10000032-RR-3'") == [("CT ABDOMEN: abscess.",)]
        named = dict(_rows(ep, "SELECT note_id, field_value FROM note.radiology_detail WHERE field_name = "
                               "'addendum_note_id'"))
        assert named == {f"{P}-RR-1": f"{P}-AR-1", f"{P}-RR-2": f"{P}-AR-2"}
        parents = dict(_rows(ep, "SELECT note_id, field_value FROM note.radiology_detail WHERE field_name = "
                                 "'parent_note_id'"))
        assert parents == {f"{P}-AR-1": f"{P}-RR-1", f"{P}-AR-2": f"{P}-RR-2"}
        assert {i for i, _ in _notes(ep, "note.discharge").items()} == {f"{P}-DS-1", f"{P}-DS-2", f"{P}-AD-1"}


def _all_notes(store: Path, key: EpisodeKey) -> dict[str, list[tuple[Any, ...]]]:
    with build_episode(store, key) as ep:
        return {name: _rows(ep, f"SELECT * FROM {name} ORDER BY ALL") for name in _NOTE_TABLES}


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_same_visible_rows_same_numbers(note_store: Path, policy: str) -> None:
    assert _all_notes(note_store, EpisodeKey(P, T, policy=policy)) == _all_notes(
        note_store, EpisodeKey(P, QUIET, policy=policy))


@pytest.mark.parametrize("cutoff", [ts("06-01 11:00"), T, QUIET, LATER, ts("06-20 00:00")])
@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_stored_numbers_and_per_statement_numbering_agree(
    note_store: Path, fallback_store: Path, cutoff: datetime, policy: str
) -> None:
    key = EpisodeKey(P, cutoff, policy=policy)
    with open_store_reader(note_store) as reader:
        present, stored = reader.present, reader.instants
    with open_store_reader(fallback_store) as reader:
        assert not any(name in reader.instants and reader.instants[name].sequences for name in _NOTE_TABLES)
    assert all(stored[name].sequences for name in _NOTE_TABLES)  # the store keeps the numbers: both paths compared
    with duckdb.connect(str(note_store), read_only=True) as con:
        for name in _NOTE_TABLES:
            shown = []
            for instants in (stored, None):
                sql, params = get_policy(policy).visible_select(get_table(name), key, present=present,
                                                                instants=instants)
                shown.append(sorted(con.execute(sql, params).fetchall(), key=repr))
            assert shown[0] == shown[1], name
    assert _all_notes(note_store, key) == _all_notes(fallback_store, key)


def _surfaces(store: Path, key: EpisodeKey) -> str:
    """Every text a model can get of the notes: the episode's SQL, timelines, EHR tools, Curated Input."""
    shown: list[str] = []
    with build_episode(store, key) as ep:
        for name in _NOTE_TABLES:
            shown.append(repr(ep.execute(f"SELECT * FROM {name}").rows))
            shown.append(repr(ep.timeline_rows(name).rows))
            shown.append(repr(ep.timeline_rows(name, since=key.prediction_time - timedelta(days=2),
                                               until=key.prediction_time).rows))
        ctx = ToolContext(ep, Limits())
        calls: list[tuple[str, dict[str, Any]]] = [
            ("ehr.get_event_counts_by_time", {"start_time": "1900-01-01", "end_time": "2400-01-01"}),
        ]
        for name in _NOTE_TABLES:
            calls += [
                ("ehr.run_sql_query", {"sql_query": f"SELECT * FROM {name} ORDER BY 1 DESC"}),
                ("ehr.get_latest_records", {"table_name": name}),
                ("ehr.get_records_by_keyword", {"table_name": name, "keyword": f"{P}-"}),
            ]
        for tool, args in calls:
            result = anyio.run(call_tool, ctx, tool, args)
            assert result.error_kind is None, (tool, args, result.content)
            shown += [result.content, repr(result.data)]
        shown.append(render_text_timeline(ep, budget_tokens=64_000).text)
    return "\n".join(shown)


def _originals_in(text: str) -> set[str]:
    """Store ids found in ``text`` (whole ids: RR-14 is not RR-1); none is a shown id."""
    return {i for i in ORIGINAL_IDS if re.search(rf"(?<![0-9]){re.escape(i)}(?![0-9])", text)}


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_no_surface_shows_a_store_note_id(note_store: Path, policy: str) -> None:
    text = _surfaces(note_store, EpisodeKey(P, T, policy=policy))
    assert f"{P}-RR-2" in text and f"{P}-AR-1" in text and f"{P}-RR-99" in text  # shown ids, the author as stored
    assert not _originals_in(text)


def _client_texts(store: Path, key: EpisodeKey) -> tuple[str, str]:
    """What an MCP client and an inspect tool receive of the note tables."""
    from mcp import Client

    from clinseek.inspect_tasks._tools import episode_tools
    from clinseek.mcpserver import EpisodeSpec, open_spec, session_server, tool_result

    calls = [("ehr.run_sql_query", {"sql_query": f"SELECT * FROM {name}"}) for name in _NOTE_TABLES]
    calls += [("ehr.get_latest_records", {"table_name": name}) for name in _NOTE_TABLES]
    spec = EpisodeSpec(store=store, subject_id=key.subject_id, prediction_time=key.prediction_time, policy=key.policy)
    texts: list[list[str]] = [[], []]

    async def main() -> None:
        async with await open_spec(spec) as session:
            async with Client(session_server(session)) as client:
                for name, args in calls:
                    result = tool_result(await client.call_tool(name, args))
                    assert result.error_kind is None, (name, result.content)
                    texts[0] += [result.content, repr(result.data)]
            tools = {d.name: d for d in episode_tools(session)}
            for name, args in calls:
                texts[1].append(str(await tools[name.replace(".", "__")].tool(**args)))

    anyio.run(main)
    return "\n".join(texts[0]), "\n".join(texts[1])


def test_mcp_and_inspect_show_only_renumbered_ids(note_store: Path) -> None:
    for text in _client_texts(note_store, EpisodeKey(P, T)):
        assert f"{P}-RR-2" in text and f"{P}-AR-1" in text
        assert not _originals_in(text)
