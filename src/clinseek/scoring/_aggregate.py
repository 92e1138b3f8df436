"""From result rows to per-question scores and per-group statistics."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from statistics import fmean

import numpy as np

from ..errors import ScoringError
from ._categories import card_sorted
from ._model import SampleScore, ScoredStatus, ScoreInput
from ._paired import shown_t_interval
from ._refscore import ReferenceScorer
from ._score import score_sample
from ._summary_model import GroupStats, QuestionScore, RunScores, UsageStats

RunKey = tuple[str, str, str]


def score_questions(
    rows: Iterable[ScoreInput],
    *,
    score_infra_errors: bool = False,
    expected: Sequence[ScoreInput] = (),
    reference: ReferenceScorer | None = None,
) -> list[QuestionScore]:
    """Score every row and fold the repetitions of each (benchmark, mode, model, qid).

    A question's metrics are the means over its scored runs. ``expected`` lists questions every
    run key should have (one template row each, ``status`` ignored): a qid with no result row
    in a run key present in ``rows`` is added as ``missing`` and scores 0 (the reference drops
    such questions from the mean instead). Templates with different ``benchmark`` values are
    separate parts (the text and multimodal files of a benchmark folder, see ``read_expected``): a
    run key is held only to the parts of which it has at least one row. With ``reference``, every run also gets the reference's
    F1 (``f1_reference``, the mean over all runs of a question; ``None`` for a missing question).
    Output is sorted by run key, then qid.

    Raises:
        ScoringError: the runs of one qid answer different questions (their ``question_hash``
            differ), or a row answers another question than the ``expected`` template of its qid
            (results of another benchmark build; rows and templates that carry no hash are not
            checked).
    """
    grouped: dict[tuple[RunKey, str], list[ScoreInput]] = defaultdict(list)
    for row in rows:
        grouped[(row.run_key, row.qid)].append(row)
    _check_expected(grouped, expected)
    out = [_fold(sorted(group, key=lambda r: r.run_index), score_infra_errors, reference)
           for group in grouped.values()]
    for run_key, templates in _expected_per_run(grouped, expected).items():
        for template in templates:
            if (run_key, template.qid) not in grouped:
                out.append(_missing(template, run_key))
    return sorted(out, key=lambda q: (q.benchmark, q.mode, q.model, q.qid))


def _expected_per_run(
    grouped: dict[tuple[RunKey, str], list[ScoreInput]], expected: Sequence[ScoreInput]
) -> dict[RunKey, list[ScoreInput]]:
    """The templates each run key is held to: those of every part (templates sharing a ``benchmark``,
    e.g. one file of a benchmark folder) of which the run answered at least one question. A text run
    is so never charged the multimodal file's questions as missing, nor the reverse."""
    parts: dict[str, list[ScoreInput]] = defaultdict(list)
    part_of: dict[str, str] = {}
    for template in expected:
        parts[template.benchmark].append(template)
        part_of.setdefault(template.qid, template.benchmark)
    answered: dict[RunKey, set[str]] = {key: set() for key, _ in grouped}
    for key, qid in grouped:
        if qid in part_of:
            answered[key].add(part_of[qid])
    # a run with no row of any part (only reachable from Python: score_path keeps the manifest's rows) is
    # held to every part, as before parts existed
    return {key: [t for name in parts if name in names or not names for t in parts[name]]
            for key, names in answered.items()}


def _check_expected(grouped: dict[tuple[RunKey, str], list[ScoreInput]], expected: Sequence[ScoreInput]) -> None:
    wanted = {t.qid: t.question_hash for t in expected if t.question_hash}
    wrong = sorted({(key, qid) for (key, qid), group in grouped.items()
                    if qid in wanted and any(r.question_hash and r.question_hash != wanted[qid] for r in group)})
    if wrong:
        (key, qid), more = wrong[0], f" and {len(wrong) - 1} more" if len(wrong) > 1 else ""
        raise ScoringError(
            f"{'/'.join(key)} qid {qid}{more}: the results answer other questions than the manifest under the "
            "same qids (another benchmark build); rerun them with 'clinseek run --bench <this manifest>' (resume "
            "reruns only the changed questions) or score without --manifest"
        )


def _question_hash(group: list[ScoreInput]) -> str | None:
    hashes = {r.question_hash for r in group}
    if len(hashes) > 1:
        first = group[0]
        raise ScoringError(
            f"{'/'.join(first.run_key)} qid {first.qid}: its runs answer different questions "
            f"(question_hash {', '.join(sorted(h[:12] if h else 'absent' for h in hashes))}); the results mix "
            "benchmark builds"
        )
    return hashes.pop()


def _fold(group: list[ScoreInput], score_infra_errors: bool, reference: ReferenceScorer | None = None) -> QuestionScore:
    first = group[0]
    question_hash = _question_hash(group)
    samples = [score_sample(row, score_infra_errors=score_infra_errors) for row in group]
    if reference is not None:
        samples = [s.model_copy(update={"f1_reference": reference.score(row)}) for s, row in zip(samples, group, strict=True)]
    scored = [s for s in samples if s.scored]
    statuses = {s.status for s in scored}
    status: ScoredStatus = (
        "answered" if "answered" in statuses
        else "missing" if statuses == {"invalid_input"}  # the manifest row could not be run
        else "no_answer" if "no_answer" in statuses
        else "infra_error"  # only infrastructure errors (scored 0 with score_infra_errors, else unscored)
    )
    # over the same runs as f1: a run the mapping did not score (no answer, another route) counts its f1
    raw = [s.f1_raw if s.f1_raw is not None else s.f1 for s in scored] if any(s.f1_raw is not None for s in scored) else []
    judged = [float(s.judge_match) for s in scored if s.judge_match is not None]
    return QuestionScore(
        benchmark=first.benchmark,
        mode=first.mode,
        model=first.model,
        qid=first.qid,
        task=first.task,
        task_type=first.task_type,
        category=first.category,
        binary=all(s.route in ("binary", "yes_no") for s in samples),
        status=status,
        scored=bool(scored),
        precision=_mean_or_zero(s.precision for s in scored),
        recall=_mean_or_zero(s.recall for s in scored),
        f1=_mean_or_zero(s.f1 for s in scored),
        exact_match=_mean_or_zero(s.exact_match for s in scored),
        f1_raw=fmean(raw) if raw else None,
        judge_accuracy=fmean(judged) if judged else None,
        f1_reference=_mean(s.f1_reference for s in samples if s.f1_reference is not None),
        question_hash=question_hash,
        runs=samples,
    )


def _missing(template: ScoreInput, run_key: RunKey) -> QuestionScore:
    benchmark, mode, model = run_key
    row = template.model_copy(
        update={"benchmark": benchmark, "mode": mode, "model": model, "status": "no_answer", "answer": None}
    )
    sample = score_sample(row)
    return QuestionScore(
        benchmark=benchmark,
        mode=row.mode,
        model=model,
        qid=row.qid,
        task=row.task,
        task_type=row.task_type,
        category=row.category,
        binary=sample.route in ("binary", "yes_no"),
        status="missing",
        scored=True,
        precision=0.0,
        recall=0.0,
        f1=0.0,
        exact_match=0.0,
        question_hash=template.question_hash,
    )


def _mean_or_zero(values: Iterable[float]) -> float:
    items = list(values)
    return fmean(items) if items else 0.0


def _mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return fmean(items) if items else None


def group_stats(questions: Sequence[QuestionScore]) -> GroupStats:
    """Micro statistics of a group: means over its scored questions, with status counts."""
    scored = [q for q in questions if q.scored]
    judged = [q.judge_accuracy for q in scored if q.judge_accuracy is not None]
    reference = [q.f1_reference for q in questions if q.f1_reference is not None]
    return GroupStats(
        n_questions=len(scored),
        n_runs=sum(len(q.runs) for q in questions),
        n_answered=sum(q.status == "answered" for q in scored),
        n_no_answer=sum(r.status == "no_answer" for q in scored for r in q.runs),
        n_missing=sum(q.status == "missing" for q in scored),
        n_infra_error=sum(r.status == "infra_error" for q in questions for r in q.runs),
        precision=_mean(q.precision for q in scored),
        recall=_mean(q.recall for q in scored),
        f1=_mean(q.f1 for q in scored),
        exact_match=_mean(q.exact_match for q in scored),
        f1_ci_t=shown_t_interval([q.f1 for q in scored], 0.0, 1.0),
        f1_raw=_f1_raw(scored),
        judge_accuracy=fmean(judged) if judged else None,
        n_judged=len(judged),
        f1_reference=fmean(reference) if reference else None,
        n_reference=len(reference),
    )


def _f1_raw(scored: Sequence[QuestionScore]) -> float | None:
    """Mean F1 without the multi-answer vocabulary mapping over the same questions as ``f1`` (a question
    the mapping did not score counts its ``f1``); ``None`` when no question was scored through it."""
    if all(q.f1_raw is None for q in scored):
        return None
    return fmean(q.f1_raw if q.f1_raw is not None else q.f1 for q in scored)


def _by(questions: Sequence[QuestionScore], key: Callable[[QuestionScore], str],
        order: Callable[[Iterable[str]], list[str]] = sorted) -> dict[str, GroupStats]:
    groups: dict[str, list[QuestionScore]] = defaultdict(list)
    for q in questions:
        groups[key(q)].append(q)
    return {name: group_stats(groups[name]) for name in order(groups)}


def usage_stats(samples: Sequence[SampleScore]) -> UsageStats:
    """Usage statistics over runs (means over runs that report each value)."""
    usages = [s.usage for s in samples]
    by_name: dict[str, int] = defaultdict(int)
    for usage in usages:
        for name, count in usage.tool_calls.items():
            by_name[name] += count
    latencies = [u.latency_s for u in usages if u.latency_s is not None]
    costs = [u.cost_usd for u in usages if u.cost_usd is not None]
    return UsageStats(
        n_runs=len(usages),
        tool_calls_mean=_mean(float(u.n_tool_calls) for u in usages),
        tool_calls_by_name=dict(sorted(by_name.items())),
        turns_mean=_mean(float(u.turns) for u in usages if u.turns is not None),
        input_tokens_total=_total(u.input_tokens for u in usages),
        output_tokens_total=_total(u.output_tokens for u in usages),
        cached_tokens_total=_total(u.cached_tokens for u in usages),
        input_tokens_mean=_mean(float(u.input_tokens) for u in usages if u.input_tokens is not None),
        output_tokens_mean=_mean(float(u.output_tokens) for u in usages if u.output_tokens is not None),
        cost_usd_total=sum(costs) if costs else None,
        n_cost_reported=len(costs),
        latency_s_mean=_mean(latencies),
        latency_s_p50=float(np.percentile(latencies, 50)) if latencies else None,
        latency_s_p95=float(np.percentile(latencies, 95)) if latencies else None,
    )


def _total(values: Iterable[int | None]) -> int | None:
    items = [v for v in values if v is not None]
    return sum(items) if items else None


def summarize_run(questions: Sequence[QuestionScore]) -> RunScores:
    """Summary of one run key's questions: overall (micro), macro over categories, groups, usage.

    Raises:
        ValueError: if ``questions`` is empty or mixes run keys.
    """
    keys = {(q.benchmark, q.mode, q.model) for q in questions}
    if len(keys) != 1:
        raise ValueError(f"summarize_run needs exactly one run key, got {sorted(keys)}")
    per_category = _by(questions, lambda q: q.category, card_sorted)
    category_f1 = [g.f1 for g in per_category.values() if g.f1 is not None]
    first = questions[0]
    parse_modes: dict[str, int] = defaultdict(int)
    for sample in (s for q in questions for s in q.runs if s.status == "answered"):
        parse_modes[sample.parse_mode or "unrecorded"] += 1
    return RunScores(
        benchmark=first.benchmark,
        mode=first.mode,
        model=first.model,
        overall=group_stats(questions),
        macro_f1_over_categories=fmean(category_f1) if category_f1 else None,
        per_task_type=_by(questions, lambda q: q.task_type),
        per_category=per_category,  # in the card's order
        per_task=_by(questions, lambda q: q.task),
        usage=usage_stats([s for q in questions for s in q.runs]),
        parse_modes=dict(sorted(parse_modes.items())),
    )


def strict_view(row: ScoreInput) -> ScoreInput:
    """``row`` as the strict scorer sees it: an answer not read in its mode's own format
    (``clinseek.agent.STRICT_PARSE_MODES``: ``finish_call`` / ``answer_tag``) is no answer."""
    from ..agent import STRICT_PARSE_MODES

    if row.status != "answered" or row.parse_mode == STRICT_PARSE_MODES.get(row.mode):
        return row
    return row.model_copy(update={"status": "no_answer", "answer": None})
