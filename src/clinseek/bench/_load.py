"""Reading manifests: a JSON array (text split), JSONL (multimodal split, AgentEHR-Bench), or a benchmark directory.

A bad row fails that row, not the file: :func:`read_manifest` returns the good rows and one
:class:`~clinseek.errors.ManifestError` per bad row (file, row = qid or 1-based line/index,
field, problem). :func:`load_questions` is the strict form the runner uses.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from ..errors import ManifestError
from ._question import Question, question_from_agentehr, question_from_mm, question_from_text
from ._rows import AgentEHRRow, MultimodalRow, TextRow
from ._tasks import known_tasks, unknown_task

RowKind = Literal["text", "multimodal", "agentehr"]
Row = TextRow | MultimodalRow | AgentEHRRow

TEXT_FILE = "ClinSeek-Bench_text.json"
"""File name of the text split in a release-shaped benchmark directory."""
MM_FILE = "ClinSeek-Bench_multimodal.jsonl"
"""File name of the multimodal split in a release-shaped benchmark directory."""
AGENTEHR_FILE = "AgentEHR-Bench.jsonl"
"""File name of an AgentEHR-Bench manifest in a benchmark directory (``clinseek bench build --benchmark agentehr``)."""

_MODELS: dict[RowKind, type[Row]] = {"text": TextRow, "multimodal": MultimodalRow, "agentehr": AgentEHRRow}


@dataclass(frozen=True, slots=True)
class Rejected:
    """A manifest row that did not validate, with what could be read of it.

    Attributes:
        error: why (file, row, field, problem).
        record: the row's JSON object (``None`` when the line is not a JSON object).
        qid: a unique id for the row's result: its ``qid`` when no other row of the file has it,
            ``"<qid> (<item|line> N)"`` when another has, ``"<file stem> <item|line> N"`` without one.
    """

    error: ManifestError
    record: dict[str, Any] | None
    qid: str


@dataclass(slots=True)
class ManifestRead:
    """The outcome of reading one manifest file.

    Attributes:
        path: the file.
        kind: the row kind the file holds.
        rows: the rows that validated, in file order.
        errors: one error per row that did not (and file-level problems).
        rejected: the rows behind ``errors``, in file order (what ``clinseek run`` records as
            ``invalid_input`` results).
        positions: each valid row's place in the file (``item N`` / ``line N``), by qid, for the
            problems found later (against a store) to name it as a row's own errors do.
    """

    path: Path
    kind: RowKind
    rows: list[Row] = field(default_factory=list)
    errors: list[ManifestError] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    positions: dict[str, str] = field(default_factory=dict)

    def where(self, qid: str) -> str:
        """``"<file>: row <qid> (item N)"`` for a valid row (``line N`` in JSONL), as its errors name it."""
        position = self.positions.get(qid)
        return f"{self.path}: row {qid}" + (f" ({position})" if position else "")

    def questions(self) -> list[Question]:
        """The valid rows normalised to :class:`Question`."""
        return [to_question(r) for r in self.rows]

    def reject(self, error: ManifestError, record: Any, where: str, qids: Counter[str]) -> None:
        """Record a row that did not validate (``qids``: how often each qid occurs in the file)."""
        qid = record.get("qid") if isinstance(record, dict) else None
        if not isinstance(qid, str) or not qid:
            qid = f"{self.path.stem} {where}"
        elif qids[qid] > 1:
            qid = f"{qid} ({where})"
        self.errors.append(error)
        self.rejected.append(Rejected(error, record if isinstance(record, dict) else None, qid))


def to_question(row: Row) -> Question:
    """Normalise any released row to a :class:`Question`."""
    if isinstance(row, TextRow):
        return question_from_text(row)
    if isinstance(row, MultimodalRow):
        return question_from_mm(row)
    return question_from_agentehr(row)


def detect_kind(record: dict[str, Any]) -> RowKind:
    """The row kind declared by a record's fields.

    Multimodal rows carry ``source_benchmark``/``snapshot_spec``/``modalities``; text rows carry
    ``task_type``; anything else is read as an AgentEHR-Bench row.
    """
    if any(
        k in record for k in ("snapshot_spec", "source_benchmark", "modalities", "leakage_policy_version")
    ):
        return "multimodal"
    if "task_type" in record:
        return "text"
    return "agentehr"


def _records(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield ``(row number, parsed record)``: array index + 1 for JSON arrays, line number for JSONL."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ManifestError(path, f"cannot read the file: {err}") from err
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ManifestError(
                path, f"invalid JSON at line {err.lineno} column {err.colno}: {err.msg}"
            ) from err
        yield from enumerate(data, start=1)
        return
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as err:
            yield (
                lineno,
                ManifestError(path, f"invalid JSON: {err.msg} (column {err.colno})", row=f"line {lineno}"),
            )


def _row_error(path: Path, where: str | int, err: ValidationError) -> ManifestError:
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or None
    problem = first["msg"]
    if "input" in first and first["type"] != "missing" and not isinstance(first["input"], dict):
        got = repr(first["input"])
        if got not in problem:  # a validator that names the value already (the time parsers) says it once
            problem += f" (got {got})"
    if len(err.errors()) > 1:
        problem += f"; and {len(err.errors()) - 1} more problem(s) in this row"
    return ManifestError(path, problem, row=where, field=loc)


def _file_kind(records: list[tuple[int, Any]]) -> RowKind:
    """The kind declared by the file's rows: multimodal if any row says so, else text if any row does."""
    kinds = {detect_kind(r) for _, r in records if isinstance(r, dict)}
    for kind in ("multimodal", "text"):
        if kind in kinds:
            return kind
    return "agentehr"


def read_manifest(path: Path | str, *, kind: RowKind | None = None) -> ManifestRead:
    """Read and validate every row of one manifest file.

    Args:
        path: a ``.json`` array or a ``.jsonl`` file.
        kind: the row kind; by default the one the rows declare (:func:`detect_kind`): multimodal if
            any row has multimodal fields, else text if any row has ``task_type``, else AgentEHR.

    Returns:
        The valid rows and one :class:`ManifestError` per invalid row (row = its qid when it has
        one, else ``"line N"`` / ``"item N"``): rows that do not validate, rows whose ``task`` is
        not one of the kind's known tasks (:func:`clinseek.bench.known_tasks`; the error suggests
        the closest names and lists them all), and duplicate qids.

    Raises:
        ManifestError: the file cannot be read or is not JSON / JSONL at all.
    """
    path = Path(path)
    records = list(_records(path))
    out = ManifestRead(path, kind or _file_kind(records))
    seen: set[str] = set()
    qids = Counter(r["qid"] for _, r in records if isinstance(r, dict) and isinstance(r.get("qid"), str))
    known = known_tasks(out.kind)
    unit = "item" if path.read_bytes()[:64].lstrip().startswith(b"[") else "line"
    for number, record in records:
        position = f"{unit} {number}"
        if isinstance(record, ManifestError):
            out.reject(record, None, position, qids)
            continue
        where: str | int = position
        if not isinstance(record, dict):
            error = ManifestError(path, f"expected a JSON object, got {type(record).__name__}", row=where)
            out.reject(error, None, position, qids)
            continue
        if out.kind == "agentehr" and "qid" not in record:
            record = {**record, "qid": f"{path.stem}_{number}"}
        qid = record.get("qid")
        where = f"{qid} ({where})" if isinstance(qid, str) and qid else where
        try:
            row = _MODELS[out.kind].model_validate(record)
        except ValidationError as err:
            out.reject(_row_error(path, where, err), record, position, qids)
            continue
        problem = unknown_task(row.task, known, what=f"{out.kind} task")
        if problem is not None:
            out.reject(ManifestError(path, problem, row=where, field="task"), record, position, qids)
            continue
        if row.qid in seen:
            out.reject(ManifestError(path, "duplicate qid", row=where, field="qid"), record, position, qids)
            continue
        seen.add(row.qid)
        out.rows.append(row)
        out.positions[row.qid] = position
    return out


def manifest_files(path: Path | str) -> list[Path]:
    """The manifest files of ``path``: the file itself, or a benchmark directory's split files.

    A directory is read like the release: ``ClinSeek-Bench_text.json``,
    ``ClinSeek-Bench_multimodal.jsonl`` and ``AgentEHR-Bench.jsonl``, whichever exist.

    Raises:
        ManifestError: the path does not exist, or a directory holds none of the files.
    """
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ManifestError(path, "no such manifest file or benchmark directory")
    files = [path / name for name in (TEXT_FILE, MM_FILE, AGENTEHR_FILE) if (path / name).is_file()]
    if not files:
        raise ManifestError(path, f"benchmark directory holds none of {TEXT_FILE}, {MM_FILE}, {AGENTEHR_FILE}")
    return files


def load_questions(path: Path | str) -> list[Question]:
    """All questions of a manifest file or benchmark directory, normalised.

    Raises:
        ManifestError: any row does not validate (the message names the first bad row and how
            many rows failed; run ``clinseek bench validate`` to see them all).
    """
    questions: list[Question] = []
    for file in manifest_files(path):
        read = read_manifest(file)
        if read.errors:
            first = read.errors[0]
            more = f" ({len(read.errors)} bad rows in all)" if len(read.errors) > 1 else ""
            raise ManifestError(first.path, first.problem + more, row=first.row, field=first.field)
        questions += read.questions()
    return questions
