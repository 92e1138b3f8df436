"""Finding result files under a folder and telling, file by file, which format each one holds.

A folder may mix clinseek's runs and the reference's files (ClinSeek-Evaluation-Results), in any
of their shapes (:func:`clinseek.refformat.row_format`). The walk follows symbolic links once and
names what it finds by the path the user sees; folders whose name starts with ``_`` or ``.``
(``_archive``, ``_multi_eval_raw``) are not entered, but a link into them is followed. Each
reference run (benchmark, mode, model) is read from one source: its raw results before its scored
rows before its hierarchical rows, ``merged_unique.jsonl`` before ``results.jsonl``, and its
largest split (``full*`` before ``subset*`` before ``smoke*``); the others are listed as skipped.
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import ScoringError
from ..refformat import path_run_key, path_split, row_format, visible_parts
from ._read import text_lines

Layout = Literal["auto", "clinseek", "reference"]
SourceFormat = Literal["clinseek", "exported", "raw", "scored", "hierarchical"]

_RAW = ("merged_unique.jsonl", "results.jsonl")
_SCORED = ("rescored.jsonl", "scored.jsonl")
_HIER = ("rows.jsonl",)
_NAMES = (*_RAW, *_SCORED, *_HIER)
_PEEK_LINES = 20
FORMAT_NAMES: dict[str, str] = {
    "clinseek": "clinseek results",
    "exported": "reference layout written by clinseek",
    "raw": "reference results",
    "scored": "reference scored rows",
    "hierarchical": "reference hierarchical rows",
}
"""How each source format is named in what ``score`` says it read."""


@dataclass(frozen=True, slots=True)
class ResultSource:
    """One thing to read: a results file, or the ``rows.jsonl`` files of one hierarchical run."""

    path: Path
    """The file (or the hierarchical run's folder), as the user sees it (links not resolved)."""
    format: SourceFormat
    files: tuple[Path, ...]
    run_key: tuple[str, str, str] | None
    """(benchmark, mode, model) from the path for the reference's formats; ``None`` for clinseek's
    (its rows, ``run_manifest.json`` or its folders say)."""

    @property
    def is_reference(self) -> bool:
        """True for every format but clinseek's own rows."""
        return self.format != "clinseek"


@dataclass(frozen=True, slots=True)
class Discovery:
    """What :func:`discover` found: the sources to read, and what it left out and why."""

    sources: list[ResultSource]
    skipped: list[str]


def _peek(path: Path) -> SourceFormat | Literal["empty"] | None:
    """The format of the first rows of ``path`` that parse; ``"empty"`` when every line is blank, ``None``
    when no line of the first few is a JSON object of a known shape (the reader then names the bad rows)."""
    seen = 0  # lines that are not blank
    try:
        for _, line in text_lines(path):
            if isinstance(line, str) and not line.strip():
                continue
            seen += 1
            if seen > _PEEK_LINES:
                return None
            if isinstance(line, UnicodeDecodeError):
                continue
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                return row_format(row)
    except OSError:
        return None
    return None if seen else "empty"


def _walk(root: Path, skipped: list[str]) -> list[Path]:
    """Candidate result files under ``root`` (links followed once, ``_``/``.`` folders not entered)."""
    found: list[Path] = []
    seen_dirs: dict[str, str] = {}
    seen_files: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen_dirs:
            skipped.append(f"{dirpath}: the same folder as {seen_dirs[real]} (a symbolic link); read once")
            dirnames[:] = []
            continue
        seen_dirs[real] = dirpath
        hidden = sorted(d for d in dirnames if d.startswith(("_", ".")))
        for name in hidden:
            if name.startswith("_"):
                skipped.append(f"{Path(dirpath) / name}: not entered (folders starting with '_' hold raw or archived "
                               "copies; a link into them is followed; score the folder itself to read it)")
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(("_", ".")))
        for name in sorted(filenames):
            if name not in _NAMES:
                continue
            path = Path(dirpath) / name
            real_file = os.path.realpath(path)
            if real_file in seen_files:
                skipped.append(f"{path}: the same file as {seen_files[real_file]} (a symbolic link); read once")
                continue
            seen_files[real_file] = path
            found.append(path)
    return found


def _per_folder(files: list[Path], skipped: list[str]) -> list[Path]:
    """Per folder, the preferred file (``merged_unique.jsonl`` > ``results.jsonl`` > ``rescored.jsonl`` >
    ``scored.jsonl`` > ``rows.jsonl``); a per-region ``results.jsonl`` is skipped under a merged one."""
    by_dir: dict[Path, dict[str, Path]] = defaultdict(dict)
    for path in files:
        by_dir[path.parent][path.name] = path
    out = []
    for folder, names in by_dir.items():
        chosen = next(names[n] for n in _NAMES if n in names)
        for path in names.values():
            if path != chosen:
                skipped.append(f"{path}: not read; {chosen.name} in the same folder is read instead")
        parent = by_dir.get(folder.parent, {})
        merged = next((parent[n] for n in _RAW if n in parent), None)
        if chosen.name in _RAW and merged is not None:
            skipped.append(f"{chosen}: a per-region file; the merged {merged} is read instead")
            continue
        out.append(chosen)
    return sorted(out, key=lambda p: visible_parts(p))


def _format(path: Path, layout: Layout, skipped: list[str]) -> SourceFormat | None:
    peeked = _peek(path)
    if peeked == "empty":
        skipped.append(f"{path}: holds no rows")
        return None
    if layout == "clinseek":
        return "clinseek"
    if layout == "reference":
        return "raw" if peeked in (None, "clinseek") else peeked
    if peeked is not None:
        return peeked
    return "raw" if path_run_key(path) is not None else "clinseek"  # the reader then names the bad rows


_KIND_RANK = {"exported": 0, "raw": 0, "scored": 1, "hierarchical": 2}
_SPLIT = re.compile(r"(full|subset|smoke)(\d+)")


def _preference(source: ResultSource) -> tuple[int, int, int, tuple[str, ...]]:
    """Sort key: raw before scored before hierarchical; merged_unique first; the largest split first."""
    merged = 0 if source.path.name == "merged_unique.jsonl" else 1
    split = path_split(source.path) or ""
    match = _SPLIT.fullmatch(split)
    rank = {"full": 0, "subset": 1, "smoke": 3}.get(match.group(1), 2) if match else 2
    size = -int(match.group(2)) if match else 0
    return (_KIND_RANK[source.format], merged, rank * 10**9 + size, visible_parts(source.path))


def _hierarchical_source(files: list[Path], key: tuple[str, str, str]) -> ResultSource:
    parts = visible_parts(files[0])
    model_at = max(i for i, p in enumerate(parts) if p == key[2])
    return ResultSource(Path(*parts[: model_at + 1]), "hierarchical", tuple(files), key)


def _one_per_run(sources: list[ResultSource], skipped: list[str]) -> list[ResultSource]:
    by_key: dict[tuple[str, str, str], list[ResultSource]] = defaultdict(list)
    out = [s for s in sources if s.run_key is None]
    for source in sources:
        if source.run_key is not None:
            by_key[source.run_key].append(source)
    for key, group in by_key.items():
        ranked = sorted(group, key=_preference)
        out.append(ranked[0])
        for other in ranked[1:]:
            skipped.append(f"{other.path}: the same run ({'/'.join(key)}) as {ranked[0].path}, which is read instead")
    return sorted(out, key=lambda s: visible_parts(s.path))


def discover(root: Path | str, layout: Layout = "auto") -> Discovery:
    """The result sources under ``root`` (or ``root`` itself when it is a file), each with its format.

    ``layout="auto"`` tells each file's format from its rows (:func:`clinseek.refformat.row_format`);
    ``clinseek`` or ``reference`` reads every file as that. Files: ``results.jsonl``,
    ``merged_unique.jsonl``, ``scored.jsonl``, ``rescored.jsonl``, ``rows.jsonl``.

    Raises:
        ScoringError: ``root`` does not exist or holds no result file.
    """
    root = Path(root)
    skipped: list[str] = []
    if root.is_file():
        files = [root]
    elif root.is_dir():
        files = _per_folder(_walk(root, skipped), skipped)
    else:
        raise ScoringError(f"{root}: no such file or directory")
    plain: list[ResultSource] = []
    hierarchical: dict[tuple[str, str, str], list[Path]] = defaultdict(list)
    for path in files:
        fmt = _format(path, layout, skipped)
        if fmt is None:
            continue
        key = path_run_key(path) if fmt != "clinseek" else None
        if fmt != "clinseek" and key is None:
            skipped.append(f"{path}: {FORMAT_NAMES[fmt]} outside the reference layout (no 'agentic' or 'oneshot' "
                           "folder names the mode); not read")
            continue
        if fmt == "hierarchical" and key is not None:
            hierarchical[key].append(path)
        else:
            plain.append(ResultSource(path, fmt, (path,), key))
    plain += [_hierarchical_source(paths, key) for key, paths in hierarchical.items()]
    sources = _one_per_run(plain, skipped)
    if not sources:
        why = f" ({len(skipped)} left out; first: {skipped[0]})" if skipped else ""
        raise ScoringError(f"{root}: no result files found{why}")
    return Discovery(sources, skipped)
