"""MIMIC-IV-Note 2.2: de-identified free-text notes (https://physionet.org/content/mimic-iv-note/2.2/)."""

from __future__ import annotations

from ._model import EventTime, ParentTime, Table, parse_columns

_NOTE_COLS = (
    "note_id VARCHAR, subject_id INTEGER, hadm_id INTEGER, note_type VARCHAR, note_seq INTEGER, "
    "charttime TIMESTAMP, storetime TIMESTAMP, text VARCHAR"
)
_NOTE_DOCS = {
    "note_id": "Note identifier (subject_id-type-seq).",
    "note_type": "DS (discharge summary), AD (addendum), RR (radiology report), AR (radiology addendum).",
    "charttime": "Time the note refers to (discharge, or the exam).",
    "storetime": "Time the note was signed; it is known from then.",
    "text": "The de-identified note text.",
}
_DETAIL_COLS = (
    "note_id VARCHAR, subject_id INTEGER, field_name VARCHAR, field_value VARCHAR, field_ordinal INTEGER"
)
_DETAIL_DOCS = {
    "field_name": "author, cpt_code, exam_code, exam_name, addendum_note_id, ...",
    "field_ordinal": "Orders repeated fields.",
}
_DISCHARGE_TIME = "greatest(t.charttime, t.storetime)"
_RADIOLOGY_TIME = "coalesce(t.storetime, t.charttime)"
_NOTE = "MIMIC-IV-Note 2.2"

NOTE: tuple[Table, ...] = (
    Table(
        "note",
        "discharge",
        "Discharge summaries: the narrative written at discharge (history, hospital course, medications, plan).",
        parse_columns(_NOTE_COLS, _NOTE_DOCS),
        key=("note_id",),
        event_time=EventTime(
            _DISCHARGE_TIME, sort=("charttime",), rationale="written at discharge and signed later"
        ),
        source=_NOTE,
        files=("note/discharge", "discharge"),
    ),
    Table(
        "note",
        "discharge_detail",
        "Name/value details of discharge notes (author, addenda).",
        parse_columns(_DETAIL_COLS, _DETAIL_DOCS),
        key=("note_id", "field_name", "field_ordinal"),
        event_time=EventTime(
            "parent_time",
            parent=ParentTime("note.discharge", ("note_id",), _DISCHARGE_TIME),
            sort=("note_id",),
        ),
        source=_NOTE,
        files=("note/discharge_detail", "discharge_detail"),
    ),
    Table(
        "note",
        "radiology",
        "Radiology reports (all modalities), including for outpatient exams (hadm_id NULL).",
        parse_columns(_NOTE_COLS, _NOTE_DOCS),
        key=("note_id",),
        event_time=EventTime(_RADIOLOGY_TIME, sort=("charttime",), rationale="a report exists once signed"),
        source=_NOTE,
        files=("note/radiology", "radiology"),
    ),
    Table(
        "note",
        "radiology_detail",
        "Name/value details of radiology reports (exam name, CPT code, author, addenda).",
        parse_columns(_DETAIL_COLS, _DETAIL_DOCS),
        key=("note_id", "field_name", "field_ordinal"),
        event_time=EventTime(
            "parent_time",
            parent=ParentTime("note.radiology", ("note_id",), _RADIOLOGY_TIME),
            sort=("note_id",),
        ),
        source=_NOTE,
        files=("note/radiology_detail", "radiology_detail"),
    ),
)
