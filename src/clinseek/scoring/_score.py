"""Per-sample scoring: one deterministic rule per answer shape."""

from __future__ import annotations

from ._metrics import BINARY_LABELS, SetMetrics, binary_metrics, set_metrics
from ._model import Route, SampleScore, ScoreInput
from ._multimodal import canonical_names, single_metrics, single_route
from ._normalize import normalize_set, normalize_text


def sample_route(row: ScoreInput) -> Route:
    """Which rule scores ``row``.

    - ``binary``: ``task_type == "risk_prediction"``, or a text row whose candidates are
      exactly two labels ``yes``/``no``.
    - ``set``: other text rows; multimodal rows with a gold of two or more items (names
      mapped through the closed vocabulary first).
    - a single-answer subtype (``yes_no``, ``count``, ``datetime``, ``id``, ``name``):
      multimodal rows with a one-item gold, from a declared subtype or read from the gold (see
      ``single_route``). A declared ``list`` does not make a one-item gold a set: the reference
      declares ``list`` on every multimodal row and routes by gold length, and a set rule would
      give ``["yes", "no"]`` F1 0.667 again.
    """
    if row.task_type == "risk_prediction":
        return "binary"
    if row.task_type == "decision_making":
        return "binary" if _binary_labels(row) is not None else "set"
    if len(row.gold) != 1:
        return "set"
    return single_route(row.gold[0], row.answer_type)


def _resolve_aliases(pred: frozenset[str], row: ScoreInput) -> frozenset[str]:
    """Answer items that name a gold item by one of its aliases become that item's name."""
    if not row.gold_aliases:
        return pred
    table = {
        alias: normalize_text(name)
        for name, aliases in zip(row.gold, row.gold_aliases, strict=False)
        for alias in normalize_set(aliases)
    }
    return frozenset(table.get(item, item) for item in pred)


def _binary_labels(row: ScoreInput) -> frozenset[str] | None:
    labels = normalize_set(row.candidates or [])
    if row.task_type == "risk_prediction":
        return labels if len(labels) == 2 else BINARY_LABELS
    return labels if labels == BINARY_LABELS else None


def score_sample(row: ScoreInput, *, score_infra_errors: bool = False) -> SampleScore:
    """Score one result row deterministically (no network, no model).

    Infrastructure errors score 0 and are excluded from means (``scored=False``) unless
    ``score_infra_errors``; a run with no answer, or only empty items, is ``no_answer`` and scores
    0. Binary rows need exactly one of the two labels; set rows get set P/R/F1/EM over
    normalised items; multimodal single-answer rows are right (1) or wrong (0).
    """
    route = sample_route(row)
    pred = _resolve_aliases(normalize_set(row.answer or []), row)
    status = row.status
    if status == "answered" and not pred:
        status = "no_answer"
    if status != "answered":
        scored = status != "infra_error" or score_infra_errors
        return _score(row, route, status, scored, SetMetrics.zero(), [], sorted(normalize_set(row.gold)))
    gold = normalize_set(row.gold)
    f1_raw: float | None = None
    if route == "binary":
        labels = _binary_labels(row) or BINARY_LABELS
        metrics, pred_out, gold_out = binary_metrics(pred, gold, labels), sorted(pred), sorted(gold)
    elif route == "set" and row.task_type == "multimodal":
        f1_raw = set_metrics(pred, gold).f1
        pred_c = canonical_names(list(pred), task=row.task)
        gold_c = canonical_names(list(gold), task=row.task)
        metrics, pred_out, gold_out = set_metrics(pred_c, gold_c), sorted(pred_c), sorted(gold_c)
    elif route == "set":
        metrics, pred_out, gold_out = set_metrics(pred, gold), sorted(pred), sorted(gold)
    else:
        metrics, pred_out, gold_out = single_metrics(route, list(pred), row.gold[0], task=row.task)
    return _score(row, route, "answered", True, metrics, pred_out, gold_out, f1_raw)


def _score(
    row: ScoreInput,
    route: Route,
    status: str,
    scored: bool,
    metrics: SetMetrics,
    pred: list[str],
    gold: list[str],
    f1_raw: float | None = None,
) -> SampleScore:
    return SampleScore.model_validate(
        {
            "qid": row.qid,
            "run_index": row.run_index,
            "status": status,
            "route": route,
            "scored": scored,
            "precision": metrics.precision,
            "recall": metrics.recall,
            "f1": metrics.f1,
            "exact_match": metrics.exact_match,
            "f1_raw": f1_raw,
            "pred": pred,
            "gold": gold,
            "usage": row.usage,
            "parse_mode": row.parse_mode if status == "answered" else None,
        }
    )
