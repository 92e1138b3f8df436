"""Questions a store cannot answer honestly: a patient it does not hold, a cutoff outside the
patient's record, linked CXR studies or images it does not hold.

A cutoff after everything the store holds about the patient (plus :data:`RECORD_MARGIN`) makes the
episode show the whole record, outcomes included: a mistyped year silently becomes a leak. A
cutoff before the patient's first record shows nothing. Both are refused by ``bench validate
--store`` and ``run`` unless the user says they are intended (``--allow-outside-record``). A
multimodal question whose linked studies or images are not in the store would run with fewer
images than it names; ``run`` refuses it unless ``--allow-missing-cxr`` (then the result row
records what was missing).

Text a row carries verbatim (its Curated Input ``input``, a pre-rendered ``question``, the ``instruction``)
reaches the model as written, outside the temporal policy: :func:`future_text` finds the dates and times in
it after the question's ``prediction_time`` (a timeline that runs past the cutoff, an outcome written into
the instruction). ``bench validate`` notes them and ``run`` records them in the rows' ``input_warnings``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..store import open_store, record_spans
from ._mentions import times_after
from ._question import Question

RECORD_MARGIN = dt.timedelta(hours=24)
"""How far after the last instant of a patient's record a cutoff may lie (a question asked at a
discharge whose patient never came back is legitimate; one a year later is a typo)."""

ProblemKind = Literal["subject", "record", "cxr", "future_text"]


@dataclass(frozen=True, slots=True)
class QuestionProblem:
    """Why a store cannot answer one question honestly.

    Attributes:
        qid: the question.
        kind: ``subject`` (not in the store), ``record`` (cutoff outside the record span), ``cxr``
            (linked studies / images not in the store) or ``future_text`` (verbatim text mentions a time after
            the cutoff: :func:`future_text`).
        field: the manifest field at fault.
        problem: one line naming the value and what was expected.
    """

    qid: str
    kind: ProblemKind
    field: str
    problem: str


def check_questions(store: Path | str, questions: Sequence[Question]) -> list[QuestionProblem]:
    """Every :class:`QuestionProblem` of ``questions`` against ``store``, in question order.

    Raises:
        StoreError: the store cannot be opened or read.
    """
    path = Path(store)
    spans = record_spans(path, (q.subject_id for q in questions))
    linked = _linked_cxr(path, questions)
    out: list[QuestionProblem] = []
    for q in questions:
        if q.subject_id not in spans:
            out.append(QuestionProblem(q.qid, "subject", "subject_id", f"subject_id {q.subject_id} is not in the store"))
            continue
        found = _outside(q, spans[q.subject_id])
        if found is not None:
            out.append(QuestionProblem(q.qid, "record", "prediction_time", found))
        out += _missing_cxr(q, linked)
    return out


def _outside(q: Question, span: tuple[dt.datetime | None, dt.datetime | None]) -> str | None:
    first, last = span
    cutoff = q.prediction_time.isoformat(sep=" ")
    if first is None or last is None:
        return f"subject_id {q.subject_id} has no dated record in the store: the episode at {cutoff} would be empty"
    if q.prediction_time < first:
        return (f"{cutoff} is before the patient's first record ({first.isoformat(sep=' ')}): the episode "
                "would be empty")
    if q.prediction_time > last + RECORD_MARGIN:
        return (f"{cutoff} is after the patient's last record ({last.isoformat(sep=' ')}) + "
                f"{RECORD_MARGIN.total_seconds() / 3600:g} h: the episode would show the whole record, outcomes "
                "included (a mistyped year?)")
    return None


def _linked_cxr(store: Path, questions: Sequence[Question]) -> tuple[set[tuple[int, int]], set[tuple[int, str]]]:
    """``({(subject_id, study_id)}, {(subject_id, dicom_id)})`` the store holds for the questions' links."""
    if not any(q.study_ids or q.dicom_ids for q in questions):
        return set(), set()
    handle = open_store(store)
    if not handle.has_table("cxr.metadata"):
        return set(), set()
    subjects = sorted({q.subject_id for q in questions if q.study_ids or q.dicom_ids})
    con = handle.connect()
    try:
        rows = con.execute(
            "SELECT subject_id, study_id, dicom_id FROM cxr.metadata WHERE subject_id IN (SELECT unnest(?::BIGINT[]))",
            [subjects],
        ).fetchall()
    finally:
        con.close()
    return {(s, st) for s, st, _ in rows}, {(s, d) for s, _, d in rows}


def _missing_cxr(q: Question, linked: tuple[set[tuple[int, int]], set[tuple[int, str]]]) -> list[QuestionProblem]:
    studies = [s for s in q.study_ids if (q.subject_id, s) not in linked[0]]
    images = [d for d in q.dicom_ids if (q.subject_id, d) not in linked[1]]
    out = []
    if studies:
        shown = ", ".join(str(s) for s in studies)
        out.append(QuestionProblem(q.qid, "cxr", "study_ids", f"linked CXR study {shown} is not in the store (cxr.metadata)"))
    if images:
        out.append(QuestionProblem(q.qid, "cxr", "dicom_ids", f"linked CXR image {', '.join(images)} is not in the store (cxr.metadata)"))
    return out


_VERBATIM = (("curated_text", "input"), ("question_text", "question"), ("instruction", "instruction"))
"""The question's fields shown to the model as written: (attribute, manifest field; multimodal rows carry
``input`` as ``input_text``)."""

_SHOWN_TIMES = 3


def future_text(question: Question) -> list[QuestionProblem]:
    """Each verbatim text field of ``question`` that mentions a date or time after its ``prediction_time``.

    The ways of writing a date or time read, and when a mention counts as after the cutoff (a date with a time to
    the microsecond, a date alone by its day, a month alone by its month; any of an ambiguous mention's readings):
    :func:`clinseek.bench._mentions.times_after`. The problem names the manifest field (``input`` or
    ``input_text``, ``question``, ``instruction``), how many such times it holds and the first ones.
    """
    out: list[QuestionProblem] = []
    cutoff = question.prediction_time
    for attribute, name in _VERBATIM:
        if name == "input" and question.benchmark == "clinseek-bench-mm":
            name = "input_text"
        text = getattr(question, attribute)
        if not text:
            continue
        later = times_after(text, cutoff)
        if later:
            shown = ", ".join(later[:_SHOWN_TIMES]) + (", ..." if len(later) > _SHOWN_TIMES else "")
            out.append(QuestionProblem(
                question.qid, "future_text", name,
                f"the text given to the model as written mentions {len(later)} time(s) after prediction_time "
                f"{cutoff.isoformat(sep=' ')} ({shown}): the model would read them"))
    return out
