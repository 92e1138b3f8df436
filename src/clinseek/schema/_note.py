"""MIMIC-IV-Note 2.2: de-identified free-text notes (https://physionet.org/content/mimic-iv-note/2.2/)."""

from __future__ import annotations

from ._model import EventTime, ParentTime, Table, parse_columns

_NOTE_COLS = (
    "note_id VARCHAR event, subject_id INTEGER static, hadm_id INTEGER encounter, note_type VARCHAR event, "
    "note_seq INTEGER event, charttime TIMESTAMP event, storetime TIMESTAMP event, text VARCHAR event"
)
_NOTE_DOCS = {
    "note_id": "Note identifier (subject_id-type-seq).",
    "note_type": "DS (discharge summary), AD (addendum), RR (radiology report), AR (radiology addendum).",
    "charttime": "Time the note refers to (discharge, or the exam).",
    "storetime": "Time the note was signed; it is known from then.",
    "text": "The de-identified note text.",
}
_DETAIL_COLS = (
    "note_id VARCHAR event, subject_id INTEGER static, field_name VARCHAR event, field_value VARCHAR reference, "
    "field_ordinal INTEGER event"
)
_NOTE_WHY = {
    "charttime": "the time the note refers to; the note is visible only once written and signed",
    "storetime": "the signing time, part of the note's event time",
    "text": "written and signed by the note's event time",
}
_DETAIL_WHY = {
    "field_value": "an addendum_note_id names a later addendum: NULL until that note exists; other fields "
    "(author, exam_name, cpt_code, parent_note_id) are known with the note"
}


def _addendum(notes: str, time: str) -> tuple[tuple[str, str], ...]:
    """The instant a detail row's ``field_value`` is known: an addendum's own time, else always."""
    return (
        (
            "field_value",
            f"CASE WHEN t.field_name = 'addendum_note_id' THEN (SELECT min({time}) FROM {notes} a "
            "WHERE a.note_id = t.field_value) ELSE TIMESTAMP '-infinity' END",
        ),
    )
_DETAIL_DOCS = {
    "field_name": "author, cpt_code, exam_code, exam_name, addendum_note_id, ...",
    "field_ordinal": "Orders repeated fields.",
}
_DISCHARGE_TIME = "greatest(t.charttime, t.storetime)"
_RADIOLOGY_TIME = "coalesce(t.storetime, t.charttime)"
_DISCHARGE_TIME_A = "greatest(a.charttime, a.storetime)"
_RADIOLOGY_TIME_A = "coalesce(a.storetime, a.charttime)"
_NOTE = "MIMIC-IV-Note 2.2"

NOTE: tuple[Table, ...] = (
    Table(
        "note",
        "discharge",
        "Discharge summaries: the narrative written at discharge (history, hospital course, medications, plan).",
        parse_columns(_NOTE_COLS, _NOTE_DOCS, _NOTE_WHY),
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
        parse_columns(_DETAIL_COLS, _DETAIL_DOCS, _DETAIL_WHY),
        key=("note_id", "field_name", "field_ordinal"),
        event_time=EventTime(
            "parent_time",
            parent=ParentTime("note.discharge", ("note_id",), _DISCHARGE_TIME),
            sort=("note_id",),
        ),
        references=_addendum("note.discharge", _DISCHARGE_TIME_A),
        source=_NOTE,
        files=("note/discharge_detail", "discharge_detail"),
    ),
    Table(
        "note",
        "radiology",
        "Radiology reports (all modalities), including for outpatient exams (hadm_id NULL).",
        parse_columns(_NOTE_COLS, _NOTE_DOCS, _NOTE_WHY),
        key=("note_id",),
        event_time=EventTime(_RADIOLOGY_TIME, sort=("charttime",), rationale="a report exists once signed"),
        source=_NOTE,
        files=("note/radiology", "radiology"),
    ),
    Table(
        "note",
        "radiology_detail",
        "Name/value details of radiology reports (exam name, CPT code, author, addenda).",
        parse_columns(_DETAIL_COLS, _DETAIL_DOCS, _DETAIL_WHY),
        key=("note_id", "field_name", "field_ordinal"),
        event_time=EventTime(
            "parent_time",
            parent=ParentTime("note.radiology", ("note_id",), _RADIOLOGY_TIME),
            sort=("note_id",),
        ),
        references=_addendum("note.radiology", _RADIOLOGY_TIME_A),
        source=_NOTE,
        files=("note/radiology_detail", "radiology_detail"),
    ),
)
