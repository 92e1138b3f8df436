"""Which questions of a benchmark a run takes: a ``--tasks`` filter and a stratified ``--limit``."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest

from .._suggest import did_you_mean
from ..errors import RegistryError
from ._question import Question


def stratified_order(questions: Sequence[Question]) -> list[int]:
    """Indices of ``questions`` in the order a limit takes them: round-robin over the tasks (the first
    question of every task, then the second, ...), the tasks interleaved by task type (risk
    prediction, decision making, multimodal, ...) in the order each first appears in the manifest.

    Any prefix of this order is a stratified subset, and a larger limit keeps a smaller one's questions.
    """
    by_task: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        by_task.setdefault(q.task, []).append(i)
    by_type: dict[str, list[str]] = {}
    for task, indices in by_task.items():
        by_type.setdefault(questions[indices[0]].task_type, []).append(task)
    tasks = [t for group in zip_longest(*by_type.values()) for t in group if t is not None]
    return [i for row in zip_longest(*(by_task[t] for t in tasks)) for i in row if i is not None]


def select_questions(questions: Sequence[Question], tasks: Sequence[str] | None = None,
                     limit: int | None = None) -> list[Question]:
    """The questions of ``tasks`` (all when empty), then at most ``limit`` of them taken by
    :func:`stratified_order`; returned in manifest order.

    Raises:
        RegistryError: a name in ``tasks`` is not a task of these questions (with the closest names).
    """
    present = list(dict.fromkeys(q.task for q in questions))
    if tasks:
        unknown = [f"{t!r}{did_you_mean(t, present)}" for t in tasks if t not in present]
        if unknown:
            raise RegistryError(f"--tasks {', '.join(unknown)}: not a task of this benchmark "
                                f"(its tasks: {', '.join(present)})")
        wanted = set(tasks)
        questions = [q for q in questions if q.task in wanted]
    if limit is None or limit >= len(questions):
        return list(questions)
    keep = set(stratified_order(questions)[:limit])
    return [q for i, q in enumerate(questions) if i in keep]
