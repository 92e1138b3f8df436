"""``clinseek.report`` / ``report_async``: one self-contained HTML report (the ``clinseek report`` command calls it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._sync import sync_twin

if TYPE_CHECKING:
    from ..reporting import ReportStats


async def report_async(
    folders: Sequence[Path | str] | Path | str,
    out: Path | str = "report.html",
    *,
    image_roots: Sequence[Path | str] = (),
    title: str = "clinseek report",
) -> ReportStats:
    """Write one self-contained HTML report of the runs in ``folders`` (no network needed to read it).

    Args:
        folders: scores folders (``score``'s ``out``: ``summary.json`` + ``per_question.jsonl``), demo folders
            or results folders (scored on the fly); one folder or several.
        out: the HTML file to write (through a temporary name: no half-written file).
        image_roots: folders relative image paths are resolved under.
        title: title of the page.

    Returns:
        What was written: ``path``, ``size_bytes``, ``runs``, ``question_rows``, ``trajectories``, ``images``,
        ``bad_rows``.

    Raises:
        ReportError: a folder holds neither scores nor results, a scores file cannot be read, or a run is given
            twice.
    """
    import anyio.to_thread

    from ..reporting import build_report, load_inputs

    dirs = [folders] if isinstance(folders, str | Path) else list(folders)
    return await anyio.to_thread.run_sync(
        lambda: build_report(load_inputs(dirs), out, image_roots=image_roots, title=title))


report = sync_twin(report_async)
