"""MIMIC-IV-Note 2.2: de-identified free-text notes (https://physionet.org/content/mimic-iv-note/2.2/)."""

from __future__ import annotations

from ._model import EventTime, ParentTime, Renumbered, Sequence, Table, parse_columns, renumbered_by

_NOTE_COLS = (
    "note_id VARCHAR sequence, subject_id INTEGER static, hadm_id INTEGER encounter, note_type VARCHAR event, "
    "note_seq INTEGER sequence, charttime TIMESTAMP event, storetime TIMESTAMP event, text VARCHAR event"
)
_NOTE_DOCS = {
    "note_id": "Note identifier (subject_id-type-seq); in an episode seq is note_seq as shown.",
    "note_type": "DS (discharge summary), AD (addendum), RR (radiology report), AR (radiology addendum).",
    "note_seq": "The note's number among the patient's notes of its type; in an episode 1..n over the visible ones "
    "in signing order.",
    "charttime": "Time the note refers to (discharge, or the exam).",
    "storetime": "Time the note was signed; it is known from then.",
    "text": "The de-identified note text.",
}
_DETAIL_COLS = (
    "note_id VARCHAR sequence, subject_id INTEGER static, field_name VARCHAR event, field_value VARCHAR sequence, "
    "field_ordinal INTEGER event"
)
_NOTE_WHY = {
    "note_id": "MIMIC numbers a patient's notes of one type by chart time, notes signed later and notes never "
    "released included: renumbered among the visible notes of the type",
    "note_seq": "as note_id",
    "charttime": "the time the note refers to; the note is visible only once written and signed",
    "storetime": "the signing time, part of the note's event time",
    "text": "written and signed by the note's event time",
}
_DETAIL_WHY = {
    "note_id": "the note's id, renumbered as the note's",
    "field_value": "an addendum_note_id (a later addendum; its row is visible with the addendum) or a parent_note_id "
    "(the report an addendum belongs to) names a note by its numbered id: renumbered, NULL until that note is visible; "
    "other fields (author, exam_name, cpt_code) are known with the note",
}
_NAMING = "t.field_name IN ('addendum_note_id', 'parent_note_id')"
"""The detail rows whose ``field_value`` is a note id."""
DISCHARGE_SEQUENCE = Sequence("note.discharge", "note_id", "note_seq", ("note_type",))
"""``note_seq`` per patient and note type (DS, AD), written into ``<subject_id>-<note_type>-<note_seq>``."""
RADIOLOGY_SEQUENCE = Sequence("note.radiology", "note_id", "note_seq", ("note_type",))
"""``note_seq`` per patient and note type (RR, AR), written into ``<subject_id>-<note_type>-<note_seq>``."""


def _detail(sequence: Sequence) -> tuple[Renumbered, ...]:
    """A detail table's renumbered columns: its note's id, and a ``field_value`` that names a note."""
    return (
        *renumbered_by(sequence, "note_id", id="note_id"),
        *renumbered_by(sequence, "field_value", id="field_value", where=_NAMING),
    )


_DETAIL_DOCS = {
    "field_name": "author, cpt_code, exam_code, exam_name, addendum_note_id, parent_note_id, ...",
    "field_ordinal": "Orders repeated fields.",
}
_DISCHARGE_TIME = "greatest(t.charttime, t.storetime)"
_RADIOLOGY_TIME = "coalesce(t.storetime, t.charttime)"


def _detail_time(notes: str, note_time: str) -> str:
    """A detail row's event time: its note's (``parent_time``); a row naming an addendum (``addendum_note_id``) is
    written with the addendum, so it is visible from the later of the note's time and the addendum's (never if the
    addendum is not in the store): shown with the report, its presence told that an addendum was still to come."""
    named = f"(SELECT min({note_time.replace('t.', 'a.')}) FROM {notes} a WHERE a.note_id = t.field_value)"
    return (f"CASE WHEN t.field_name = 'addendum_note_id' THEN CASE WHEN {named} IS NOT NULL THEN "
            f"greatest(parent_time, {named}) END ELSE parent_time END")


_DETAIL_RATIONALE = (
    "a detail is known with its note; a row naming an addendum (addendum_note_id) once the addendum is signed: "
    "shown with the report, its presence told that an addendum was still to come (attack17)"
)
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
        renumbered=renumbered_by(DISCHARGE_SEQUENCE, "note_id", id="note_id", counter="note_seq"),
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
            _detail_time("note.discharge", _DISCHARGE_TIME),
            parent=ParentTime("note.discharge", ("note_id",), _DISCHARGE_TIME),
            sort=("note_id",),
            rationale=_DETAIL_RATIONALE,
        ),
        renumbered=_detail(DISCHARGE_SEQUENCE),
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
        renumbered=renumbered_by(RADIOLOGY_SEQUENCE, "note_id", id="note_id", counter="note_seq"),
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
            _detail_time("note.radiology", _RADIOLOGY_TIME),
            parent=ParentTime("note.radiology", ("note_id",), _RADIOLOGY_TIME),
            sort=("note_id",),
            rationale=_DETAIL_RATIONALE,
        ),
        renumbered=_detail(RADIOLOGY_SEQUENCE),
        source=_NOTE,
        files=("note/radiology_detail", "radiology_detail"),
    ),
)
