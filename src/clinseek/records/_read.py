"""Reading result rows: a clinseek row, or one the runner wrote in the reference's layout, as a ResultRow."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..refformat import from_reference_row
from ._row import ResultRow


def decode_row(obj: Any) -> ResultRow:
    """One parsed line of ``results.jsonl`` as a :class:`ResultRow` (an older schema version upgraded).

    A row the runner wrote in the reference's layout (``clinseek_status`` marks it) is read back through
    the one reference adapter (``clinseek.refformat.from_reference_row``).

    Raises:
        ValueError: not a JSON object; ``pydantic.ValidationError`` (a ``ValueError``) naming the field
            that does not validate.
    """
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    if "clinseek_status" not in obj:
        return ResultRow.model_validate(obj)
    fields = from_reference_row(obj)
    return ResultRow.model_validate({k: v for k, v in fields.items() if k in ResultRow.model_fields})


@dataclass(frozen=True, slots=True)
class ReadReport:
    """What :func:`read_results` found in a results file."""

    rows: list[ResultRow]
    torn_lines: int
    """Lines that were not a complete valid row (a run killed mid-write leaves at most one)."""


def read_results(path: Path | str) -> ReadReport:
    """Read every valid row of a ``results.jsonl``; a torn or invalid line is counted and skipped, never fatal.

    Rows of either layout (:func:`decode_row`) and of any schema version are read. Returns an empty
    report when the file does not exist.
    """
    path = Path(path)
    if not path.exists():
        return ReadReport(rows=[], torn_lines=0)
    rows: list[ResultRow] = []
    torn = 0
    with path.open("rb") as fh:
        for raw in fh:
            if not raw.endswith(b"\n"):
                torn += 1  # the process died before the newline: the row is incomplete
                continue
            try:
                rows.append(decode_row(json.loads(raw)))
            except (ValueError, ValidationError):
                torn += 1
    return ReadReport(rows=rows, torn_lines=torn)
