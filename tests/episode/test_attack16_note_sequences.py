"""attack16: MIMIC-IV-Note's per-patient note counter (``note_seq``, and the ``note_id`` built from it) counts
notes the episode does not hold yet.

MIMIC-IV-Note documents ``note_seq`` as "a monotonically increasing integer which chronologically sorts the notes
within note_type categories" (charttime order), and ``note_id`` as ``<subject_id>-<note_type>-<note_seq>``. A
note becomes visible once signed (radiology: ``storetime``, else ``charttime``; discharge: the later of the two),
so a report of an exam done before the cutoff and signed after it is hidden while a later exam signed quickly is
shown, with a counter one above the hidden one: the gap says that a report is pending (and how many). The
registry classes both columns ``event`` (shown as stored), unlike ``poe_seq`` / ``emar_seq`` (``Sequence``,
renumbered per episode for the same reason).

The crafted store follows MIMIC's numbering (by charttime within the type); the note module is not in the open
demo. Not fixed here (see the report): the renumbering would need per-``note_type`` numbering, an id written
``<subject_id>-<note_type>-<n>``, and the note ids inside ``radiology_detail`` / ``discharge_detail``
``field_value`` (``parent_note_id``, ``addendum_note_id``) renumbered too.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from clinseek.episode import EpisodeKey, build_episode
from clinseek.policy import MM_POLICY, TEXT_POLICY
from policy.crafted import write_store

S = 7
CUTOFF = datetime(2150, 6, 10, 12, 0)
_ROWS = {
    "hosp.patients": [dict(subject_id=S, gender="F", anchor_age=60, anchor_year=2150, anchor_year_group="2014 - 2016")],
    "hosp.admissions": [
        dict(subject_id=S, hadm_id=1, admittime=datetime(2150, 5, 1, 8), dischtime=datetime(2150, 5, 5, 10)),
        dict(subject_id=S, hadm_id=2, admittime=datetime(2150, 5, 20, 8), dischtime=datetime(2150, 5, 25, 10)),
        dict(subject_id=S, hadm_id=3, admittime=datetime(2150, 6, 9, 8)),
    ],
    "note.radiology": [
        # a CT done at 09:00 and read at 14:00 (after the cutoff), a chest film at 10:00 read at 10:30
        dict(note_id=f"{S}-RR-1", subject_id=S, hadm_id=3, note_type="RR", note_seq=1,
             charttime=datetime(2150, 6, 10, 9), storetime=datetime(2150, 6, 10, 14), text="CT ABD: abscess."),
        dict(note_id=f"{S}-RR-2", subject_id=S, hadm_id=3, note_type="RR", note_seq=2,
             charttime=datetime(2150, 6, 10, 10), storetime=datetime(2150, 6, 10, 10, 30), text="CXR: clear."),
    ],
    "note.radiology_detail": [
        dict(note_id=f"{S}-RR-1", subject_id=S, field_name="exam_name", field_value="CT ABD", field_ordinal=1),
        dict(note_id=f"{S}-RR-2", subject_id=S, field_name="exam_name", field_value="CHEST (PA AND LAT)",
             field_ordinal=1),
    ],
    "note.discharge": [
        # the first admission's summary is signed late (after the cutoff), the second's the day after discharge
        dict(note_id=f"{S}-DS-1", subject_id=S, hadm_id=1, note_type="DS", note_seq=1,
             charttime=datetime(2150, 5, 5), storetime=datetime(2150, 6, 11, 9), text="Summary 1."),
        dict(note_id=f"{S}-DS-2", subject_id=S, hadm_id=2, note_type="DS", note_seq=2,
             charttime=datetime(2150, 5, 25), storetime=datetime(2150, 5, 26, 9), text="Summary 2."),
    ],
    "note.discharge_detail": [
        dict(note_id=f"{S}-DS-2", subject_id=S, field_name="author", field_value="___", field_ordinal=1),
    ],
}


@pytest.fixture(scope="module")
def note_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_store(tmp_path_factory.mktemp("attack16") / "notes.duckdb", _ROWS, __file__)


@pytest.mark.parametrize("policy", [TEXT_POLICY, MM_POLICY])
@pytest.mark.parametrize(("table", "detail"), [("radiology", "radiology_detail"), ("discharge", "discharge_detail")])
def test_attack16_note_counters_do_not_count_unsigned_notes(note_store: Path, policy: str, table: str,
                                                           detail: str) -> None:
    with build_episode(note_store, EpisodeKey(S, CUTOFF, policy=policy)) as ep:
        shown = ep.execute(f"SELECT note_id, note_seq FROM {table} ORDER BY charttime").rows
        named = ep.execute(f"SELECT DISTINCT note_id FROM {detail}").rows
    assert len(shown) == 1  # the later, already signed note only
    # measured before notes16's renumbering: [('7-RR-2', 2)] / [('7-DS-2', 2)]: one earlier note exists, unsigned
    assert [seq for _, seq in shown] == [1]
    assert not any(note_id.endswith("-2") for (note_id,) in named + [(i,) for i, _ in shown])
