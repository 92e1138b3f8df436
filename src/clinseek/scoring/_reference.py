"""Reading the reference's result files (ClinSeek-Evaluation-Results layout) into score inputs.

Every row goes through the one adapter, :mod:`clinseek.refformat` (``clinseek_fields``), then
through the same row reader as clinseek's own rows (:func:`score_input_from_row`). The benchmark,
mode and model come from the path the user sees (symbolic links are not resolved), so a run
linked as ``mm_bench/agentic/full2703/claude_sonnet_4_6 → _multi_eval_raw/...`` is
``claude_sonnet_4_6``. The reference's own F1 is ignored: everything is rescored here.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ScoringError
from ..refformat import path_run_key
from ._model import ScoreInput
from ._read import read_rows, score_input_from_row


def reference_run_key(path: Path | str) -> tuple[str, str, str]:
    """(benchmark, mode, model) of a reference results file, read from the path the user sees.

    Raises:
        ScoringError: when no folder of the path is ``agentic`` or ``oneshot``.
    """
    key = path_run_key(path)
    if key is None:
        raise ScoringError(f"{path}: not in the reference layout (no 'agentic' or 'oneshot' folder)")
    return key


def read_reference_results(
    path: Path | str, *, bad_rows: list[ScoringError] | None = None, run_key: tuple[str, str, str] | None = None
) -> list[ScoreInput]:
    """Read one reference results file (``results.jsonl``, ``merged_unique.jsonl``, ``scored.jsonl``,
    ``rescored.jsonl`` or ``rows.jsonl``, or one that ``clinseek run --layout reference`` wrote) into
    score inputs; the run key comes from ``run_key`` or the path (:func:`reference_run_key`).

    Multimodal rows carry no ``task_type`` (it comes from the task) and are routed by gold length, as
    the reference does (its ``answer_type`` is ``list`` in every row and changes nothing).

    Raises:
        ScoringError: naming file, line and field of the first bad row (or collected in
            ``bad_rows`` and skipped when a list is given), or for a path outside the layout.
    """
    path = Path(path)
    bench, mode, model = run_key or reference_run_key(path)
    key = {"benchmark": bench, "mode": mode, "model": model}  # the layout's run key wins over the row's
    return read_rows(path, bad_rows, lambda row: score_input_from_row(row, key).model_copy(update=key))
