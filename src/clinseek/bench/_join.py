"""``bench join``: put the EHR-Bench curated ``input``/``question`` back into released text rows.

The v2 dataset card removed ``input`` and ``question`` from ``ClinSeek-Bench_text.json`` and kept
``source_file``/``source_idx`` so that they can be joined back from the public EHR-Bench release
(EHR-R1). ``source_idx`` is the 0-based index of the row among the JSON lines of ``source_file``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._atomic import atomic_writer
from ..errors import ManifestError
from ._question import normalise_label


@dataclass(slots=True)
class JoinResult:
    """Outcome of a join: rows seen, rows that got their curated text, and why the others did not."""

    total: int = 0
    joined: int = 0
    unmatched: list[str] = field(default_factory=list)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as err:
            raise ManifestError(path, f"invalid JSON: {err.msg}", row=f"line {lineno}") from err
    return rows


def _gold_matches(row: dict[str, Any], source: dict[str, Any]) -> bool:
    """True when the EHR-Bench row's ``output`` names the same gold items as the manifest row."""
    if "output" not in source:
        return True
    multi = row.get("task_type") == "decision_making"
    mine = row.get("output") if row.get("output") is not None else row.get("label")
    ours = {s.lower() for s in normalise_label(mine, multi=multi)[0]}
    theirs = {s.lower() for s in normalise_label(source["output"], multi=multi)[0]}
    return ours == theirs


def join_ehr_bench(path: Path | str, ehr_bench: Path | str, *, out: Path | str | None = None) -> JoinResult:
    """Join EHR-Bench ``input`` (and ``question`` when present) into the rows of a text manifest.

    Args:
        path: a ClinSeek-Bench text manifest (JSON array).
        ehr_bench: the directory holding the EHR-Bench JSONL files named by ``source_file``.
        out: where to write the joined JSON array (default: ``<path stem>.joined.json`` beside it);
            written atomically.

    Returns:
        Counts, and one line per row that could not be matched (no ``source_file``/``source_idx``,
        missing file, index out of range, or an EHR-Bench ``output`` that disagrees with the row's gold).

    Raises:
        ManifestError: the manifest is not a JSON array, or an EHR-Bench file is not JSONL.
    """
    path, ehr_bench = Path(path), Path(ehr_bench)
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ManifestError(path, f"not a readable JSON array: {err}") from err
    if not isinstance(rows, list):
        raise ManifestError(path, "expected a JSON array of rows")
    cache: dict[str, list[dict[str, Any]] | None] = {}
    result = JoinResult(total=len(rows))
    for number, row in enumerate(rows, start=1):
        problem = _join_row(row, ehr_bench, cache)
        if problem:
            result.unmatched.append(f"row {row.get('qid', f'item {number}')}: {problem}")
        else:
            result.joined += 1
    target = Path(out) if out else path.with_name(path.stem + ".joined.json")
    _write_atomic(target, rows)
    return result


def _join_row(row: dict[str, Any], root: Path, cache: dict[str, list[dict[str, Any]] | None]) -> str | None:
    name, idx = row.get("source_file"), row.get("source_idx")
    if not isinstance(name, str) or not isinstance(idx, int):
        return "no source_file/source_idx"
    if name not in cache:
        file = root / Path(name).name
        cache[name] = _read_jsonl(file) if file.is_file() else None
    source_rows = cache[name]
    if source_rows is None:
        return f"EHR-Bench file {name} not found in {root}"
    if not 0 <= idx < len(source_rows):
        return f"source_idx {idx} out of range for {name} ({len(source_rows)} rows)"
    source = source_rows[idx]
    if not _gold_matches(row, source):
        return f"EHR-Bench {name}[{idx}] has a different output; not joined"
    row["input"] = source.get("input")
    if source.get("question") is not None:
        row["question"] = source["question"]
    return None


def _write_atomic(target: Path, rows: list[Any]) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_writer(target) as fh:
        json.dump(rows, fh, ensure_ascii=False, indent=1)
