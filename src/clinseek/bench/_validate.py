"""``bench validate``: row schemas, the release's expected composition, and ids that must exist in a store."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from ..store import Store, open_store
from ._agentehr import AGENTEHR_PER_TASK
from ._checks import check_questions, future_text
from ._load import ManifestRead, manifest_files, read_manifest
from ._question import Question
from ._rows import MM_LEAKAGE_POLICY
from ._tasks import AGENTEHR_TASKS, CATEGORIES, TEXT_TASKS

TEXT_RELEASE_ROWS = 1800
TEXT_RELEASE_PATIENTS = 1563
TEXT_RELEASE_TARGETS = {"target_hadm_id": 80, "target_stay_id": 80}
MM_RELEASE_SOURCES = {"ehrxqa": 497, "medmod": 492}
MM_RELEASE_TASKS = {
    "ehrxqa_image": 497,
    "medmod_decompensation": 125,
    "medmod_in_hospital_mortality": 125,
    "medmod_phenotyping": 120,
    "medmod_radiology": 122,
}


@dataclass(slots=True)
class ValidationReport:
    """What ``bench validate`` found.

    Attributes:
        files: the manifest files read.
        rows: valid rows per file.
        problems: one line per problem (bad rows, count mismatches, unknown ids).
        notes: things worth knowing that are not errors (unknown extra fields).
    """

    files: list[Path] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def validate_benchmark(
    path: Path | str,
    *,
    store: Path | str | None = None,
    release: bool = False,
    outside_record_ok: bool = False,
) -> ValidationReport:
    """Validate a manifest file or a benchmark directory.

    Every row must validate and name a known task of its kind (the problem suggests the closest
    names); a file without rows is a problem. Verbatim text (``input``, ``question``, ``instruction``)
    that mentions a time after its row's ``prediction_time`` is a note (:func:`future_text`: it reaches the
    model as written).

    Args:
        path: a manifest (``.json`` array or ``.jsonl``) or a release-shaped directory.
        store: a clinseek store; every subject, admission, stay and CXR study referenced must exist
            in it (and admissions/stays must belong to the row's subject), and each
            ``prediction_time`` must lie within the patient's record (not before its first
            instant, not after its last + :data:`~clinseek.bench.RECORD_MARGIN`).
        outside_record_ok: a ``prediction_time`` outside the record is a note, not a problem.
        release: check the composition the dataset card states (text: 1,800 = 45 x 40 rows, 720
            risk / 1,080 decision, 13 categories, 1,563 patients, 80 + 80 rows with target ids;
            multimodal: 989 = 497 EHRXQA + 492 MedMod, the 6 categories, ``patient_scope`` and
            ``multimodal-strict-temporal-scope-v1`` on every row; AgentEHR-Bench: 600 = 6 x 100 rows,
            each with a gold item).

    Raises:
        ManifestError: the path is not a manifest or benchmark directory, or a file is not JSON.
    """
    report = ValidationReport()
    for file in manifest_files(path):
        read = read_manifest(file)
        report.files.append(file)
        report.rows[str(file)] = len(read.rows)
        report.problems += [str(e) for e in read.errors]
        if not read.rows and not read.errors:
            report.problems.append(f"{file}: the manifest holds no rows")
        extras = sorted({f for r in read.rows for f in r.extra_fields})
        if extras:
            report.notes.append(f"{file}: fields not in the known schema (kept): {', '.join(extras)}")
        questions = read.questions()
        report.notes += _future_notes(file, questions)
        if release:
            report.problems += _release_problems(read, questions)
        if store is not None:
            report.problems += _store_problems(Path(store), questions, read)
            outside = [p for p in check_questions(store, questions) if p.kind == "record"]
            lines = [f"{read.where(p.qid)}: field {p.field!r}: {p.problem}" for p in outside]
            if outside_record_ok:
                report.notes += [f"{line} (allowed by --allow-outside-record)" for line in lines]
            else:
                report.problems += [f"{line}; pass --allow-outside-record if intended" for line in lines]
    return report


_SHOWN_NOTES = 20


def _future_notes(file: Path, questions: list[Question]) -> list[str]:
    """The rows whose verbatim text mentions a time after their cutoff (:func:`future_text`), the first 20."""
    lines = [f"{file}: row {p.qid}: field {p.field!r}: {p.problem}" for q in questions for p in future_text(q)]
    if len(lines) > _SHOWN_NOTES:
        lines = [*lines[:_SHOWN_NOTES], f"{file}: {len(lines) - _SHOWN_NOTES} more fields mention a time after their "
                 "row's prediction_time"]
    return lines


def _expect(name: str, got: object, want: object) -> list[str]:
    return [] if got == want else [f"{name}: expected {want}, found {got}"]


def _counts(values: Iterable[str | None]) -> dict[str, int]:
    return dict(Counter(v or "<none>" for v in values))


def _release_problems(read: ManifestRead, questions: list[Question]) -> list[str]:
    prefix = f"{read.path}: release check: "
    if read.kind == "text":
        problems = _text_release(read, questions)
    elif read.kind == "multimodal":
        problems = _mm_release(read, questions)
    else:
        problems = _agentehr_release(questions)
    return [prefix + p for p in problems]


def _agentehr_release(qs: list[Question]) -> list[str]:
    """AgentEHR-Bench's evaluation set (subset600): 600 rows, 100 per task, six tasks, a gold item each."""
    out = _expect("rows", len(qs), AGENTEHR_PER_TASK * len(AGENTEHR_TASKS))
    out += _expect("rows per task", _counts(q.task for q in qs), {t.name: AGENTEHR_PER_TASK for t in AGENTEHR_TASKS})
    out += _expect("rows without a gold item", sum(not q.label for q in qs), 0)
    return out


def _text_release(read: ManifestRead, qs: list[Question]) -> list[str]:
    out = _expect("rows", len(qs), TEXT_RELEASE_ROWS)
    out += _expect("rows per task", _counts(q.task for q in qs), {t.name: 40 for t in TEXT_TASKS})
    out += _expect(
        "rows per task_type",
        _counts(q.task_type for q in qs),
        {"risk_prediction": 720, "decision_making": 1080},
    )
    want_cat = {c.slug: c.release_rows for c in CATEGORIES if c.split == "text"}
    out += _expect("rows per category", _counts(q.category for q in qs), want_cat)
    out += _expect("patients", len({q.subject_id for q in qs}), TEXT_RELEASE_PATIENTS)
    for name, want in TEXT_RELEASE_TARGETS.items():
        out += _expect(f"rows with {name}", sum(getattr(q, name) is not None for q in qs), want)
    return out


def _mm_release(read: ManifestRead, qs: list[Question]) -> list[str]:
    out = _expect("rows", len(qs), sum(MM_RELEASE_SOURCES.values()))
    out += _expect("rows per source", _counts(q.source for q in qs), MM_RELEASE_SOURCES)
    out += _expect("rows per task", _counts(q.task for q in qs), MM_RELEASE_TASKS)
    want_cat = {c.slug: c.release_rows for c in CATEGORIES if c.split == "multimodal"}
    out += _expect("rows per category", _counts(q.category for q in qs), want_cat)
    scopes = _counts(getattr(r, "scope", None) for r in read.rows)
    out += _expect("scope", scopes, {"patient_scope": len(read.rows)})
    versions = _counts(getattr(r, "leakage_policy_version", None) for r in read.rows)
    out += _expect("leakage_policy_version", versions, {MM_LEAKAGE_POLICY: len(read.rows)})
    return out


_ID_CHECKS: tuple[tuple[str, str, str], ...] = (
    ("hadm_id", "hosp.admissions", "hadm_id"),
    ("target_hadm_id", "hosp.admissions", "hadm_id"),
    ("target_stay_id", "ed.edstays", "stay_id"),
)


def _store_problems(store_path: Path, qs: list[Question], read: ManifestRead) -> list[str]:
    """Ids referenced by the questions that the store does not hold (or that belong to another subject),
    each named by the manifest file, the row and its place in the file (``read.where``)."""
    store = open_store(store_path)
    con = store.connect()
    try:
        rows = _id_rows(qs)
        names = ["qid", "field", "subject_id", "id", "sid"]
        types = [pa.string(), pa.string(), pa.int64(), pa.int64(), pa.string()]
        columns = [pa.array([r[i] for r in rows], type=t) for i, t in enumerate(types)]
        con.register("q", pa.Table.from_arrays(columns, names=names))
        return _missing(con, store, read)
    finally:
        con.close()


def _id_rows(qs: list[Question]) -> list[tuple[str, str, int, int | None, str | None]]:
    out: list[tuple[str, str, int, int | None, str | None]] = []
    for q in qs:
        out.append((q.qid, "subject_id", q.subject_id, q.subject_id, None))
        for name in ("hadm_id", "target_hadm_id", "target_stay_id", "stay_id"):
            value = getattr(q, name)
            if value is not None:
                out.append((q.qid, name, q.subject_id, value, None))
        out += [(q.qid, "study_ids", q.subject_id, s, None) for s in q.study_ids]
        out += [(q.qid, "dicom_ids", q.subject_id, None, d) for d in q.dicom_ids]
    return out


def _missing(con: duckdb.DuckDBPyConnection, store: Store, read: ManifestRead) -> list[str]:
    has = store.has_table
    checks: list[tuple[str, str]] = [("subject_id", "SELECT subject_id AS id, subject_id FROM hosp.patients")]
    checks += [(f, f"SELECT {c} AS id, subject_id FROM {t}") for f, t, c in _ID_CHECKS if has(t)]
    stays = [f"SELECT stay_id AS id, subject_id FROM {t}" for t in ("icu.icustays", "ed.edstays") if has(t)]
    if stays:
        checks.append(("stay_id", " UNION ALL ".join(stays)))
    if has("cxr.metadata"):
        checks.append(("study_ids", "SELECT DISTINCT study_id AS id, subject_id FROM cxr.metadata"))
    problems: list[str] = []
    for name, ref in checks:
        sql = (
            f"SELECT q.qid, q.id, q.subject_id FROM q LEFT JOIN ({ref}) r ON r.id = q.id AND r.subject_id = q.subject_id "
            f"WHERE q.field = ? AND r.id IS NULL ORDER BY q.qid"
        )
        for qid, value, subject in con.execute(sql, [name]).fetchall():
            whose = "" if name == "subject_id" else f" for subject_id {subject}"
            problems.append(f"{read.where(qid)}: field {name!r}: {value} is not in the store{whose}")
    if has("cxr.metadata"):
        sql = (
            "SELECT q.qid, q.sid, q.subject_id FROM q LEFT JOIN cxr.metadata m ON m.dicom_id = q.sid "
            "AND m.subject_id = q.subject_id WHERE q.field = 'dicom_ids' AND m.dicom_id IS NULL"
        )
        problems += [
            f"{read.where(qid)}: field 'dicom_ids': {d} is not in the store for subject_id {subject}"
            for qid, d, subject in con.execute(sql).fetchall()
        ]
    checked = {c[0] for c in checks} | ({"dicom_ids"} if has("cxr.metadata") else set())
    unchecked = {f for f in ("stay_id", "study_ids", "dicom_ids", "target_stay_id") if f not in checked}
    used = {r[0] for r in con.execute("SELECT DISTINCT field FROM q").fetchall()}
    problems += [f"{read.path}: field {f!r}: the store has no table to check it against" for f in sorted(unchecked & used)]
    return problems
