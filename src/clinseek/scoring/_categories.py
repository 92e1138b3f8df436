"""Which card category a row reports under, and the card's order and names: the one place that decides.

The categories are the dataset card's 13 text and 6 multimodal categories (ClinSeek-Bench card,
"By category"), read from the task registry (``clinseek.bench.TASKS``),
never copied here. A row's category is, in order:

1. its declared ``category`` (a manifest's, or the row's own) when that names a card category, by
   slug, by the card's title (``"Laboratory & microbiology"``) or by one of its aliases (the reference
   classifier's multimodal names ``mortality_24h``, ``inpatient_mortality_mm``, ``phenotype_ccs``,
   ref_data_scoring.md §1.3: ``Category.aliases``);
2. else the registry's category of its task (the 45 EHR-Bench subtasks, AgentEHR-Bench's tasks,
   the MedMod tasks);
3. else, for an ``ehrxqa_*`` task, the question decides (:func:`ehrxqa_category`): presence,
   enumeration or change;
4. else the declared name, or the task itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal, get_args

from ..bench import CATEGORIES, category_for_mm_task, find_task, normalise_category
from ._model import TaskType

CARD_ORDER: tuple[str, ...] = tuple(c.slug for c in CATEGORIES)
"""Category slugs in the card's order: the 13 text categories, then the 6 multimodal ones."""
_TITLES = {c.slug: c.title for c in CATEGORIES}
_SPLITS = {c.slug: c.split for c in CATEGORIES}
_QUESTION = re.compile(r"<question>(.*?)</question>", re.S | re.I)
_CHANGE = re.compile(
    r"\b(?:compar\w*|newly|no longer|still (?:present|absent|there|seen|visible)|resolved|improv\w*|worsen\w*|"
    r"chang\w*)\b",
    re.I,
)
_YES_NO = frozenset({"yes", "no", "true", "false"})


def category_title(slug: str) -> str:
    """The card's name of a category (``laboratory_microbiology`` → ``Laboratory & microbiology``);
    any other name is returned as is."""
    return _TITLES.get(slug, slug)


def card_split(slug: str) -> Literal["text", "multimodal"] | None:
    """``text`` or ``multimodal`` for a card category, ``None`` for any other name."""
    return _SPLITS.get(slug)


def card_sorted(slugs: Iterable[str]) -> list[str]:
    """Distinct categories in card order; names outside the card follow, sorted."""
    names = set(slugs)
    return [s for s in CARD_ORDER if s in names] + sorted(names - set(CARD_ORDER))


def task_type_for(task: str, declared: object = None) -> TaskType:
    """``risk_prediction``, ``decision_making`` or ``multimodal``: as declared, else from the task.

    Raises:
        ValueError: the declared type is not one of the three, or none is declared and the task is
            not in the registry (the 45 text subtasks) and is not an ``ehrxqa_*`` / ``medmod_*`` task.
    """
    if declared in get_args(TaskType):
        return declared  # type: ignore[return-value]
    if declared is not None:
        raise ValueError(f"field 'task_type': expected one of {', '.join(get_args(TaskType))}, got {declared!r}")
    spec = find_task(task, "clinseek-bench-text") or find_task(task, "agentehr-bench")
    if spec is not None:
        return spec.task_type
    if task.startswith(("ehrxqa_", "medmod_")) or category_for_mm_task(task) is not None:
        return "multimodal"
    raise ValueError(f"field 'task_type': absent, and task {task!r} is not a known task")


def ehrxqa_category(question: str | None, gold: Sequence[str]) -> str:
    """The card category of an EHRXQA image question that names none (the reference's classifier
    was an LLM): ``cxr_change_comparison`` when the question compares studies (compared, newly,
    no longer, still present, resolved, improved, worsened, changed); else ``cxr_finding_presence`` when the
    gold is one yes/no; else ``cxr_finding_enumeration``. Only the ``<question>`` part of a
    pre-rendered prompt is read."""
    text = question or ""
    match = _QUESTION.search(text)
    if _CHANGE.search(match.group(1) if match else text):
        return "cxr_change_comparison"
    if len(gold) == 1 and gold[0].strip().lower() in _YES_NO:
        return "cxr_finding_presence"
    return "cxr_finding_enumeration"


def category_for(task: str, declared: object = None, *, question: str | None = None, gold: Sequence[str] = ()) -> str:
    """The category a row reports under (the rules of the module docstring), as a card slug when it is one."""
    if declared:
        slug = normalise_category(str(declared), task=task) or str(declared)
        if slug in _TITLES:
            return slug
    known = normalise_category(None, task=task)
    if known:
        return known
    if task.startswith("ehrxqa"):
        return ehrxqa_category(question, gold)
    return str(declared) if declared else task
