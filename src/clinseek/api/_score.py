"""``clinseek.score`` / ``score_async``: score results deterministically (the ``clinseek score`` command calls it)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .._sync import sync_twin

if TYPE_CHECKING:
    from ..models import ChatModel
    from ..scoring import Layout, ReferenceRules, ScoredResults, Scorer


async def score_async(
    results: Path | str,
    *,
    out: Path | str | None = None,
    manifest: Path | str | None = None,
    layout: Layout = "auto",
    scorer: Scorer = "clinseek",
    reference_rules: ReferenceRules | None = None,
    score_infra_errors: bool = False,
    strict: bool = False,
    n_resamples: int = 10_000,
    seed: int = 0,
    judge: str | ChatModel | None = None,
    judge_base_url: str | None = None,
    judge_concurrency: int = 4,
) -> ScoredResults:
    """Score every result file under ``results`` (a folder or one file) with no network, unless a judge is given.

    Each file's format is told from its rows (``layout="auto"``): clinseek's runs, the reference's results,
    merged, scored and hierarchical rows. Every (benchmark, model) run in both modes gets an agent −
    curated paired comparison (bootstrap 95 % CI, t-interval, McNemar).

    Args:
        results: a results folder (``run``'s ``out``) or one results file.
        out: write ``per_question.jsonl``, ``summary.json`` and ``summary.md`` here (``None``: write nothing);
            the paths are in the returned ``files``.
        manifest: a benchmark manifest or folder: only its questions are scored, under its categories; its
            questions without a result score 0 and are listed in ``report.missing``.
        layout: ``auto``, or ``clinseek`` / ``reference`` to read every file as that.
        scorer: ``reference`` also scores by the reference's rules (``f1_reference``, never mixed into F1).
        reference_rules: the reference rules' options (its vocabulary model), with ``scorer="reference"``.
        score_infra_errors: score infrastructure errors as 0 instead of leaving them out.
        strict: also score only answers in each mode's own format (``strict``), beside the main scores.
        n_resamples: paired bootstrap resamples.
        seed: seed of the paired bootstrap.
        judge: an optional LLM judge (``provider:model`` or a ``ChatModel``) for multimodal single answers,
            reported in its own column.
        judge_base_url: the judge's endpoint (with a ``provider:model`` judge).
        judge_concurrency: judge calls in flight at once.

    Returns:
        ``questions`` (per-question scores), ``report`` (the summary: per-run statistics, paired
        comparisons, what was read and left out) and ``files`` (what was written).

    Raises:
        ScoringError: no result files, a duplicate (run, qid, run_index), no readable row, a bad manifest.
        ModelError: a judge that cannot be built (unknown provider, missing key).
    """
    import anyio.to_thread

    from .. import scoring

    def blocking() -> ScoredResults:
        expected = scoring.read_expected(manifest) if manifest is not None else ()
        return scoring.score_path(results, layout=layout, score_infra_errors=score_infra_errors, expected=expected,
                                  n_resamples=n_resamples, seed=seed, strict=strict, scorer=scorer,
                                  reference_rules=reference_rules)

    scored = await anyio.to_thread.run_sync(blocking)
    if judge is not None:
        scored = await _judged(scored, judge, judge_base_url, judge_concurrency)
    if out is not None:
        files = await anyio.to_thread.run_sync(scoring.write_scores, scored, out)
        scored = replace(scored, files=tuple(files))
    return scored


async def _judged(scored: ScoredResults, judge: str | ChatModel, base_url: str | None,
                  concurrency: int) -> ScoredResults:
    from ..models import get_model
    from ..scoring import chat_model_judge, judge_scored

    model = get_model(judge, base_url=base_url) if isinstance(judge, str) else judge
    name = judge if isinstance(judge, str) else model.name
    try:
        return await judge_scored(scored, chat_model_judge(model), judge_name=name, concurrency=concurrency)
    finally:
        if isinstance(judge, str):
            await model.aclose()


score = sync_twin(score_async)
