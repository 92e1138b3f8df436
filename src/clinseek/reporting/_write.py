"""``write_report``: one self-contained HTML file from one or more scored runs."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from .._atomic import atomic_writer
from .._version import __version__
from ._assets import CSS, JS
from ._assets_store import ImageTable, SharedTexts
from ._blobs import blob_element, json_for_html
from ._browser import build_index, write_trajectories
from ._inputs import ReportInputs, load_inputs
from ._page import (
    BROWSER_SHELL,
    PageData,
    figures_section,
    headline_section,
    manifests_section,
    overview_section,
)
from ._svg import esc


@dataclass(frozen=True, slots=True)
class ReportStats:
    """What :func:`build_report` wrote."""

    path: Path
    size_bytes: int
    runs: int
    question_rows: int
    """Rows of the question browser (benchmark × model × question)."""
    trajectories: int
    images: int
    bad_rows: int
    """Result rows that could not be read (listed in the report's notes)."""


def _trajectory_notes(bad_rows: Sequence[str]) -> list[str]:
    if not bad_rows:
        return []
    return [f"{len(bad_rows)} result rows could not be read; their trajectories are not shown. First: {bad_rows[0]}"]


def _head(title: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    nav = "".join(f'<a href="#{i}">{n}</a>' for i, n in
                  (("headline", "Headline"), ("figures", "Figures"), ("questions", "Questions"), ("manifests", "Manifests")))
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
            f'content="width=device-width, initial-scale=1"><title>{esc(title)}</title><style>{CSS}</style></head><body>'
            f'<header class="top"><h1>{esc(title)}</h1><nav>{nav}</nav><span class="muted">clinseek {__version__} · '
            f"{stamp}</span></header><main>")


def _stream(inputs: ReportInputs, image_roots: Sequence[Path], blobs: TextIO) -> tuple[dict[str, object], list[str], int]:
    """Write trajectory, shared-text and image blobs to ``blobs``; return the index, bad rows and image count."""
    texts, images = SharedTexts(), ImageTable(image_roots)
    files: dict[Path, tuple[Path, Path]] = {}  # a file under two inputs' results roots is read once
    for source in inputs.sources:
        if source.results is None:
            continue
        for path in source.result_files:
            files.setdefault(path.resolve(), (path, source.results))
    run_keys: set[tuple[str, str, str]] = {(r.benchmark, r.mode, r.model) for r in inputs.runs}
    found = write_trajectories(blobs, list(files.values()), run_keys, texts, images)
    blobs.write(blob_element("shared-texts", texts.texts))
    for key, entry in images.entries.items():
        blobs.write(blob_element(f"img-{key}", entry))
    return build_index(inputs.questions, found), found.bad_rows, len(images.entries)


def build_report(inputs: ReportInputs, out: Path | str, *, image_roots: Sequence[Path | str] = (),
                 title: str = "clinseek report") -> ReportStats:
    """Write the report of ``inputs`` to ``out`` (written to a temporary file, then renamed: no half file).

    Result rows are streamed from disk one at a time, so memory holds compressed blobs only.
    """
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile("w+", encoding="utf-8", dir=target.parent) as blobs:
        index, bad_rows, n_images = _stream(inputs, [Path(r) for r in image_roots], blobs)
        page = PageData(inputs)
        with atomic_writer(target) as handle:
            handle.write(_head(title))
            handle.write(overview_section(page, [*inputs.notes, *_trajectory_notes(bad_rows)]))
            for section in (headline_section(page), figures_section(page), BROWSER_SHELL, manifests_section(page)):
                handle.write(section)
            handle.write("</main>\n")
            blobs.seek(0)
            shutil.copyfileobj(blobs, handle)
            handle.write(f'<script type="application/json" id="report-index">{json_for_html(index)}</script>\n')
            handle.write(f"<script>{JS}</script></body></html>\n")
    rows = index["rows"]
    assert isinstance(rows, list)
    trajectories = sum(len(m[3]) for r in rows for m in r[7:9] if m)
    return ReportStats(target, target.stat().st_size, len(inputs.runs), len(rows), trajectories, n_images,
                       len(bad_rows))


def write_report(dirs: Sequence[Path | str], out: Path | str = "report.html", *,
                 image_roots: Sequence[Path | str] = (), title: str = "clinseek report") -> Path:
    """Write one self-contained HTML report of the scored runs in ``dirs`` and return its path.

    Each folder of ``dirs`` is a scores folder (``summary.json`` + ``per_question.jsonl`` from
    ``clinseek score``, with its results found beside it or at the scored source), a ``clinseek
    demo`` folder (``scores/`` + ``runs/``), or a results folder, scored on the fly. The page needs
    no network: styles, script, charts (inline SVG) and images (JPEG thumbnails of the recorded
    image paths, looked up under ``image_roots`` when relative) are inlined, and each run of each
    question is a gzip+base64 blob decoded only when opened.

    Raises:
        ReportError: a folder holds neither scores nor results, a scores file cannot be read, or
            two folders hold the same run.
    """
    return build_report(load_inputs(dirs), out, image_roots=image_roots, title=title).path
