"""``clinseek_scorer``: clinseek's one deterministic scorer on an inspect_ai sample."""

from __future__ import annotations

from typing import Literal

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from ._rows import RunIdentity, SampleView, result_row, score_row


@scorer(metrics=[mean(), stderr()])
def clinseek_scorer(mode: Literal["agent", "curated"] = "agent") -> Scorer:
    """Per-question F1 by ``clinseek.scoring`` (the rule of the question's shape: binary, set, or a
    multimodal single answer), as ``clinseek score`` gives it for the same answer.

    The score's value is F1; its metadata holds ``precision``, ``recall``, ``f1``, ``exact_match``, the
    ``status`` (``answered`` / ``no_answer``), the ``route`` (which rule) and the normalised ``pred`` and
    ``gold`` items the rule compared. Epochs are reduced by inspect (mean by default), as
    ``clinseek score`` averages a question's runs.

    Args:
        mode: how a sample whose solver recorded no clinseek outcome is read (the solvers of the
            clinseek tasks record it): ``agent`` (its last ``ehr.finish``) or ``curated`` (its last reply).
    """

    async def score(state: TaskState, target: Target) -> Score:
        view = SampleView(qid=str(state.sample_id), epoch=state.epoch, metadata=state.metadata,
                          target=list(target.target), store=dict(state.store.items()), messages=state.messages)
        sample = score_row(result_row(view, RunIdentity(model=f"inspect:{state.model}", mode=mode)))
        return Score(
            value=sample.f1, answer="\n".join(sample.pred),
            explanation=f"{sample.status}; {sample.route} rule: predicted {sample.pred}, gold {sample.gold}",
            metadata={"f1": sample.f1, "precision": sample.precision, "recall": sample.recall,
                      "exact_match": sample.exact_match, "status": sample.status, "route": sample.route,
                      "pred": sample.pred, "gold": sample.gold},
        )

    return score
