"""Source runs of an export: the runner's ``results.jsonl`` files, their manifests and per-sample F1."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import ClinseekError
from ..records import ResultRow, RunManifest, read_results
from ..scoring import score_input, score_sample


@dataclass(frozen=True, slots=True)
class RunFile:
    """One results file with its run manifest, read and ready to filter."""

    results: Path
    manifest: RunManifest
    manifest_sha256: str
    rows: list[ResultRow]
    """Valid rows, sorted by (qid, run_index) so the export does not depend on completion order."""
    torn_lines: int


def find_result_files(paths: Sequence[Path | str]) -> list[Path]:
    """Every ``results.jsonl`` at or under ``paths`` (files or run roots), resolved, unique, sorted.

    Raises:
        ClinseekError: a path that does not exist, or one with no ``results.jsonl`` under it.
    """
    found: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.add(path.resolve())
            continue
        if not path.is_dir():
            raise ClinseekError(f"{path}: no such results file or directory")
        files = sorted(path.rglob("results.jsonl"))
        if not files:
            raise ClinseekError(f"{path}: no results.jsonl under it (run 'clinseek run' first)")
        found.update(f.resolve() for f in files)
    return sorted(found)


def read_run(results: Path) -> RunFile:
    """Read ``results`` and the ``run_manifest.json`` beside it.

    Raises:
        ClinseekError: the manifest is missing or invalid (it names the tools the run offered and the
            teacher model; without it a trajectory's provenance is unknown).
    """
    manifest_path = results.with_name("run_manifest.json")
    if not manifest_path.is_file():
        raise ClinseekError(f"{results}: no run_manifest.json beside it; cannot tell which tools the run offered")
    blob = manifest_path.read_bytes()
    try:
        manifest = RunManifest.model_validate_json(blob)
    except ValueError as err:
        raise ClinseekError(f"{manifest_path}: not a valid run manifest ({err})") from err
    report = read_results(results)
    rows = sorted(report.rows, key=lambda r: (r.qid, r.run_index, r.config_hash))
    return RunFile(results, manifest, hashlib.sha256(blob).hexdigest(), rows, report.torn_lines)


def sample_f1(row: ResultRow, manifest: RunManifest) -> float:
    """Per-sample F1 of ``row`` by the one deterministic scorer (``clinseek.scoring.score_sample``).

    Raises:
        ValueError: the row cannot be scored (no gold label, unknown task type).
    """
    score = score_sample(score_input(row))
    return score.f1
