"""attack17: a report's ``addendum_note_id`` detail row is written with the addendum, but was shown with the report
(its value NULL until the addendum is signed): before the addendum exists in the record, the row's presence told
that the radiologist would add one (MIMIC-IV-Note: an 'AR' addendum to an 'RR' report, an 'AD' to a 'DS' summary;
typically a changed or added finding, "small bleed on review").

No open note data here (the MIMIC-IV demo has no notes), so the case is crafted as tests/episode/
test_note_sequences.py's: RR-16 (CT head, signed 2180-06-09 22:00) gets its addendum AR-4 signed 2180-06-10 15:00.
At 12:00 the episode showed ``(RR-2, 'addendum_note_id', NULL)``: by construction of the renumbering, such a row
(NULL value) exists exactly when an addendum is still to be signed (100 % of the NULL-valued rows; a report without
addendum has no such row).

Fixed: a detail row that names an addendum (``field_name = 'addendum_note_id'``) is visible from the later of its
note's time and the addendum's (never if the addendum is not in the store); its other rows with the note.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from clinseek.episode import EpisodeKey, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY
from policy.crafted import write_store

P = 10000032
T = datetime(2180, 6, 10, 12, 0)
LATER = datetime(2180, 6, 10, 16, 0)


def _note(kind: str, seq: int, chart: str, signed: str, text: str) -> dict[str, Any]:
    return dict(note_id=f"{P}-{kind}-{seq}", subject_id=P, hadm_id=22841357, note_type=kind, note_seq=seq,
                charttime=datetime.fromisoformat(f"2180-{chart}"), storetime=datetime.fromisoformat(f"2180-{signed}"),
                text=text)


def _field(note: str, name: str, value: str) -> dict[str, Any]:
    return dict(note_id=f"{P}-{note}", subject_id=P, field_name=name, field_value=value, field_ordinal=1)


ROWS: dict[str, list[dict[str, Any]]] = {
    "hosp.patients": [dict(subject_id=P, gender="F", anchor_age=52, anchor_year=2180, anchor_year_group="2014 - 2016")],
    "hosp.admissions": [dict(subject_id=P, hadm_id=22841357, admittime=datetime(2180, 6, 4, 10, 0),
                             dischtime=datetime(2180, 6, 12, 14, 0), admission_type="EW EMER.")],
    "note.radiology": [
        _note("RR", 15, "06-09 08:00", "06-09 09:00", "CHEST: no acute process."),
        _note("RR", 16, "06-09 20:00", "06-09 22:00", "CT HEAD: no hemorrhage."),
        _note("AR", 4, "06-10 14:30", "06-10 15:00", "ADDENDUM: small bleed on review."),  # of RR-16, after T
    ],
    "note.radiology_detail": [
        _field("RR-15", "exam_name", "CHEST (PA AND LAT)"),
        _field("RR-16", "exam_name", "CT HEAD"),
        _field("RR-16", "addendum_note_id", f"{P}-AR-4"),
        _field("AR-4", "parent_note_id", f"{P}-RR-16"),
    ],
    "note.discharge": [
        dict(_note("DS", 21, "06-05 00:00", "06-05 09:00", "Interim summary."), note_type="DS"),
        dict(_note("AD", 5, "06-10 13:00", "06-10 15:30", "Addendum: culture grew MRSA."), note_type="AD"),
    ],
    "note.discharge_detail": [
        _field("DS-21", "author", "Dr A"),
        _field("DS-21", "addendum_note_id", f"{P}-AD-5"),
        _field("AD-5", "parent_note_id", f"{P}-DS-21"),
    ],
}


@pytest.fixture(scope="module")
def addendum_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_store(tmp_path_factory.mktemp("attack17") / "notes.duckdb", ROWS,
                       "tests/episode/test_attack17_note_addendum.py")


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack17_no_row_announces_an_unsigned_addendum(addendum_store: Path, policy: str) -> None:
    with build_episode(addendum_store, EpisodeKey(P, T, policy=policy)) as ep:
        for detail in ("note.radiology_detail", "note.discharge_detail"):
            # before the fix: (RR-2, 'addendum_note_id', NULL) and (DS-1, 'addendum_note_id', NULL)
            assert ep.execute(f"SELECT note_id, field_value FROM {detail} WHERE field_name = 'addendum_note_id'").rows == []
        assert sorted(ep.execute("SELECT note_id, field_name, field_value FROM note.radiology_detail").rows) == [
            (f"{P}-RR-1", "exam_name", "CHEST (PA AND LAT)"), (f"{P}-RR-2", "exam_name", "CT HEAD"),
        ]
        assert ep.execute("SELECT note_id, field_name, field_value FROM note.discharge_detail").rows == [
            (f"{P}-DS-1", "author", "Dr A"),
        ]


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
def test_attack17_the_addendum_row_comes_with_the_addendum(addendum_store: Path, policy: str) -> None:
    with build_episode(addendum_store, EpisodeKey(P, LATER, policy=policy)) as ep:
        assert ep.execute("SELECT note_id, field_value FROM note.radiology_detail "
                          "WHERE field_name = 'addendum_note_id'").rows == [(f"{P}-RR-2", f"{P}-AR-1")]
        assert ep.execute("SELECT note_id, field_value FROM note.discharge_detail "
                          "WHERE field_name = 'addendum_note_id'").rows == [(f"{P}-DS-1", f"{P}-AD-1")]
