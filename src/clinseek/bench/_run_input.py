"""What ``clinseek run`` runs and what it records as ``invalid_input``: one bad row fails that row.

:func:`prepare_run` reads every manifest row; a row that does not validate, names an unknown task,
or that the store cannot answer honestly (:func:`~clinseek.bench.check_questions`) becomes an
:class:`InvalidRow` with its reason, which the runner writes as an ``invalid_input`` result (scored
as a missing question) while every valid row runs.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ClinseekError, ManifestError
from ..policy import MM_POLICY, TEXT_POLICY
from ._checks import QuestionProblem, check_questions, future_text
from ._load import ManifestRead, Rejected, manifest_files, read_manifest
from ._question import Question
from ._tasks import normalise_category

logger = logging.getLogger("clinseek.bench")

_BENCHMARK = {"text": "clinseek-bench-text", "multimodal": "clinseek-bench-mm", "agentehr": "agentehr-bench"}
_TASK_TYPE = {"text": "decision_making", "multimodal": "multimodal", "agentehr": "decision_making"}
_GOLD = {"label", "ground_truth", "output", "label_aliases", "label_raw", "curated_text", "input"}


@dataclass(frozen=True, slots=True)
class InvalidRow:
    """A manifest row ``run`` does not run; it is recorded as an ``invalid_input`` result.

    Attributes:
        qid: the row's qid (see :class:`~clinseek.bench.Rejected` for rows without a usable one).
        benchmark: the results folder it belongs to (from the manifest's kind).
        task: the row's ``task`` as written (``""`` when absent).
        task_type: the row's ``task_type`` when valid, else the kind's (``decision_making``,
            ``multimodal``).
        category: the card category, when the row's fields give one.
        policy: the episode policy of its kind (it keys the results folder's configuration).
        subject_id: the row's ``subject_id`` when it is an integer.
        prediction_time: the row's ``prediction_time`` as written.
        reason: why it does not run: the file, row, field and what was expected.
        fields: the row's other fields, never its gold answer.
    """

    qid: str
    benchmark: str
    task: str
    task_type: str
    category: str | None
    policy: str
    reason: str
    subject_id: int | None = None
    prediction_time: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class RunInput:
    """The rows of a run: questions to run, rows to record as invalid, and accepted doubts.

    Attributes:
        questions: the questions that run.
        invalid: the rows recorded as ``invalid_input`` results.
        notes: per qid, what an explicit flag allowed (``--allow-outside-record``,
            ``--allow-missing-cxr``) and what its verbatim text shows of the future (:func:`text_notes`);
            recorded in the row's ``input_warnings``.
    """

    questions: list[Question] = field(default_factory=list)
    invalid: list[InvalidRow] = field(default_factory=list)
    notes: dict[str, list[str]] = field(default_factory=dict)


def prepare_run(
    path: Path | str,
    store: Path | str | None,
    *,
    outside_record_ok: bool = False,
    missing_cxr_ok: bool = False,
) -> RunInput:
    """Split a manifest file or benchmark directory into questions to run and rows to record as invalid.

    With a store file, each question is checked against it (:func:`check_questions`): a patient
    the store does not hold is invalid; a ``prediction_time`` outside the patient's record is
    invalid unless ``outside_record_ok``; linked CXR studies or images the store does not hold are
    invalid unless ``missing_cxr_ok``. What a flag allowed goes to :attr:`RunInput.notes`, and so does
    verbatim text that mentions a time after the question's cutoff (:func:`text_notes`; it runs).

    Raises:
        ManifestError: a path that is not a manifest or benchmark directory, a file that is not
            JSON, or manifests that hold no row at all.
        ClinseekError: the store holds none of the questions' patients (the wrong store).
        StoreError: the store cannot be read.
    """
    out = RunInput()
    where: dict[str, str] = {}
    for file in manifest_files(path):
        read = read_manifest(file)
        out.invalid += [_rejected(read, r) for r in read.rejected]
        questions = read.questions()
        where |= {q.qid: read.where(q.qid) for q in questions}
        out.questions += questions
    if not out.questions and not out.invalid:
        raise ManifestError(path, "the manifest holds no rows")
    out.notes = text_notes(out.questions)
    if store is not None and Path(store).is_file() and out.questions:
        _check(out, Path(store), where, outside_record_ok=outside_record_ok, missing_cxr_ok=missing_cxr_ok)
    return out


def _check(out: RunInput, store: Path, where: dict[str, str], *, outside_record_ok: bool, missing_cxr_ok: bool) -> None:
    """Move the questions ``store`` cannot answer honestly to ``out.invalid``; each reason names the manifest
    file, the row and its place in the file (``where``), the field, and the store checked against."""
    allowed = {"record": outside_record_ok, "cxr": missing_cxr_ok, "subject": False}
    flags = {"record": "--allow-outside-record", "cxr": "--allow-missing-cxr", "subject": ""}
    refused: dict[str, list[str]] = {}
    problems = check_questions(store, out.questions)
    _refuse_another_store(store, out.questions, problems)
    for problem in problems:
        text = f"field {problem.field!r}: {problem.problem}"
        if allowed[problem.kind]:
            out.notes.setdefault(problem.qid, []).append(f"{text} (allowed by {flags[problem.kind]})")
        else:
            hint = f"; pass {flags[problem.kind]} to run it anyway" if flags[problem.kind] else ""
            refused.setdefault(problem.qid, []).append(text + hint)
    kept = []
    for q in out.questions:
        if q.qid in refused:
            row = where.get(q.qid, f"row {q.qid}")
            out.invalid.append(_from_question(q, f"{row}: " + "; ".join(refused[q.qid]) + f" (store {store})"))
        else:
            kept.append(q)
    out.questions = kept


def text_notes(questions: Sequence[Question]) -> dict[str, list[str]]:
    """Per qid, a note for each verbatim text field that mentions a time after the cutoff
    (:func:`~clinseek.bench.future_text`); one warning on the ``clinseek.bench`` logger names how many
    questions have one (their rows' ``input_warnings`` say which fields and times)."""
    notes: dict[str, list[str]] = {}
    for q in questions:
        for problem in future_text(q):
            notes.setdefault(q.qid, []).append(f"field {problem.field!r}: {problem.problem}")
    if notes:
        first = next(iter(notes))
        logger.warning(
            "%d of %d questions carry text shown to the model as written that mentions a time after their "
            "prediction_time (first: %s: %s); they run, and their rows' input_warnings say so "
            "(clinseek bench validate lists them)", len(notes), len(questions), first, notes[first][0])
    return notes


def _refuse_another_store(store: Path, questions: list[Question], problems: list[QuestionProblem]) -> None:
    """A store that holds none of the questions' patients is the wrong store, not a set of bad rows."""
    unheld = {p.qid for p in problems if p.kind == "subject"}
    absent = sorted({q.subject_id for q in questions if q.qid in unheld})
    wanted = {q.subject_id for q in questions}
    if absent and len(absent) == len(wanted):
        shown = ", ".join(str(s) for s in absent[:5]) + (", ..." if len(absent) > 5 else "")
        raise ClinseekError(
            f"{store}: none of the {len(wanted)} patients of these questions is in the store "
            f"(missing subject_id {shown}); was the benchmark built from another store?"
        )


def _rejected(read: ManifestRead, rejected: Rejected) -> InvalidRow:
    record = rejected.record or {}
    task = record.get("task") if isinstance(record.get("task"), str) else ""
    task_type = record.get("task_type")
    if task_type not in ("risk_prediction", "decision_making") or read.kind != "text":
        task_type = _TASK_TYPE[read.kind]
    category = record.get("category")
    subject_id = record.get("subject_id")
    when = record.get("prediction_time", record.get("timestamp"))
    return InvalidRow(
        qid=rejected.qid, benchmark=_BENCHMARK[read.kind], task=str(task), task_type=str(task_type),
        category=normalise_category(category if isinstance(category, str) else None, task=str(task)),
        policy=MM_POLICY if read.kind == "multimodal" else TEXT_POLICY, reason=str(rejected.error),
        subject_id=subject_id if isinstance(subject_id, int) and not isinstance(subject_id, bool) else None,
        prediction_time=str(when) if when is not None else None,
        fields={k: v for k, v in record.items() if k not in _GOLD},
    )


def _from_question(q: Question, reason: str) -> InvalidRow:
    fields = q.model_dump(mode="json", exclude=_GOLD | {"label", "schema_version"})
    return InvalidRow(
        qid=q.qid, benchmark=q.benchmark, task=q.task, task_type=q.task_type, category=q.category, policy=q.policy,
        reason=reason, subject_id=q.subject_id, prediction_time=q.prediction_time.isoformat(sep=" "), fields=fields,
    )
