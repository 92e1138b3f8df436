"""Runs in the reference's layout: the row codec of ``results.jsonl`` and the export of finished runs.

``clinseek run --layout reference`` writes ``OUT/<bench>/<agentic|oneshot>/<split>/<model>/results.jsonl``
(``ehr_bench``, ``mm_bench``, ``agent_ehr_bench``; ``claude_opus_4_6``), each row in the reference's
shape with every clinseek field beside (``clinseek.refformat.to_reference_row``); resume reads them
back exactly. ``export_reference`` writes finished clinseek runs the same way.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from ..errors import ClinseekError
from ..records import ResultRow, decode_row
from ..refformat import default_split, reference_results_dir, to_reference_row

LayoutName = Literal["clinseek", "reference"]


@dataclass(frozen=True, slots=True)
class RowCodec:
    """How rows become lines of ``results.jsonl`` and back (``decode`` raises on a bad row)."""

    encode: Callable[[ResultRow], str]
    decode: Callable[[Any], ResultRow]


def _encode_reference(row: ResultRow) -> str:
    return json.dumps(to_reference_row(row.model_dump(mode="json")), ensure_ascii=False, separators=(",", ":"))


CLINSEEK_CODEC = RowCodec(encode=lambda row: row.model_dump_json(), decode=decode_row)
"""clinseek's own rows (the default)."""
REFERENCE_CODEC = RowCodec(encode=_encode_reference, decode=decode_row)
"""Rows in the reference's shape with clinseek's fields beside (read back exactly)."""


def codec_for(layout: LayoutName) -> RowCodec:
    """The codec of a results layout."""
    return REFERENCE_CODEC if layout == "reference" else CLINSEEK_CODEC


def reference_split(n_run: int, n_benchmark: int) -> str:
    """The split folder of a run: ``full<N>`` when it runs the whole benchmark, else ``smoke<N>``
    (the reference's ``full1800`` and ``smoke20``)."""
    return default_split(n_run) if n_run >= n_benchmark else f"smoke{n_run}"


@dataclass(frozen=True, slots=True)
class ExportedRun:
    """One run :func:`export_reference` wrote."""

    source: Path
    target: Path
    rows: int


def _runs(root: Path) -> Iterable[Path]:
    if root.is_file():
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_")))
        if "results.jsonl" in filenames:
            yield Path(dirpath) / "results.jsonl"


def export_reference(runs: Path | str, out: Path | str, *, split: str | None = None) -> list[ExportedRun]:
    """Write every clinseek run under ``runs`` in the reference's layout under ``out``.

    Each ``results.jsonl`` of clinseek rows goes to ``out/<bench>/<agentic|oneshot>/<split>/<model>/
    results.jsonl`` (``split`` default: ``full<N>``, N the run's questions; the model's snake-case
    name), with its ``run_manifest.json``; each file is written to a temporary name and renamed. Files
    whose rows are not clinseek rows (already in the reference's layout) are skipped. ``score`` then
    reads the export with the same per-question F1 as the run.

    Raises:
        ClinseekError: ``runs`` holds no clinseek run, ``out`` is ``runs`` or inside it (``score``
            would count every run twice), two runs map to the same folder, or a file cannot be written.
    """
    runs, out = Path(runs), Path(out)
    if not runs.exists():
        raise ClinseekError(f"{runs}: no such file or folder")
    source_root = runs if runs.is_dir() else runs.parent
    if out.resolve() == source_root.resolve() or source_root.resolve() in out.resolve().parents:
        raise ClinseekError(f"{out}: export into a folder outside {source_root} (score would read every run twice)")
    exported: list[ExportedRun] = []
    targets: dict[Path, Path] = {}
    for path in _runs(runs):
        rows = _clinseek_rows(path)
        if not rows:
            continue
        first = rows[0]
        folder = reference_results_dir(out, first.benchmark, first.mode, split or default_split(len({r.qid for r in rows})),
                                       first.model, first.task_type)
        if folder in targets:
            raise ClinseekError(f"{path} and {targets[folder]} both export to {folder}; export them separately")
        targets[folder] = path
        folder.mkdir(parents=True, exist_ok=True)
        _write_lines(folder / "results.jsonl", (REFERENCE_CODEC.encode(r) for r in rows))
        if (path.parent / "run_manifest.json").is_file():
            shutil.copyfile(path.parent / "run_manifest.json", folder / "run_manifest.json")
        exported.append(ExportedRun(path, folder / "results.jsonl", len(rows)))
    if not exported:
        raise ClinseekError(f"{runs}: holds no clinseek results.jsonl to export")
    return exported


def _clinseek_rows(path: Path) -> list[ResultRow]:
    """The rows of a clinseek ``results.jsonl`` (``[]`` when its rows are another format).

    Raises:
        ClinseekError: a row of a clinseek file does not validate (naming the file and line).
    """
    rows: list[ResultRow] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                if not line.endswith("\n"):
                    continue  # a torn last line of a killed run: resume redoes it
                raise ClinseekError(f"{path}:{number}: not a JSON line") from None
            if not rows and isinstance(obj, dict) and "clinseek_status" in obj:
                return []
            try:
                rows.append(ResultRow.model_validate(obj))
            except ValidationError as err:
                first = err.errors()[0]
                field = ".".join(str(p) for p in first["loc"])
                raise ClinseekError(f"{path}:{number}: field {field!r}: {first['msg']}") from None
    return rows


def _write_lines(path: Path, lines: Iterable[str]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line + "\n")
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise ClinseekError(f"{path}: cannot write ({err})") from err
