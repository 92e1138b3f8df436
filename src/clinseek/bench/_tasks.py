"""The task registry: every task of ClinSeek-Bench-Text (the 45 EHR-Bench subtasks), ClinSeek-Bench-MM (6
categories) and AgentEHR-Bench (6 tasks), and the dataset card's categories.

Each task is declared once, as a :class:`~clinseek.bench.TaskSpec` beside its label builder
(``_risk.py``, ``_decision.py``, ``_mm_build.py``, ``_agentehr.py``); this module collects them into
:data:`TASKS`, which the builder, ``docs/tasks.md`` (``scripts/gen_tasks_doc.py``), ``clinseek tasks``,
the agent's prompts and scoring's category grouping read. Nothing else lists task names.

Sources: the EHR-Bench subtask list of EHR-R1 (MAGIC-AI4Med/EHR-R1; 18 risk-prediction and 27
decision-making subtasks), the ClinSeek-Bench dataset card (13 text categories, 6 multimodal
categories and their row counts), MedMod (nyuad-cai/MedMod), EHRXQA (baeseongsu/ehrxqa) and AgentEHR
(BlueZeros/AgentEHR). The label definitions are the ones :func:`clinseek.bench.build_benchmark`
implements; they follow the upstream definitions where those are published and say so where clinseek
had to fix a detail (prediction time, window) itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .._suggest import did_you_mean
from ..errors import RegistryError
from ._agentehr import AGENTEHR_TASKS
from ._decision import DECISION_TASKS
from ._mm_build import MM_TASKS
from ._risk import RISK_TASKS
from ._spec import BENCHMARKS, Benchmark, Category, TaskSpec

CATEGORIES: tuple[Category, ...] = (
    Category(
        "mortality",
        "Mortality",
        "text",
        280,
        "In-hospital death from an ED visit or an inpatient stay; death within 1, 2, 3, 7, or 14 days in the ICU",
    ),
    Category(
        "readmission",
        "Readmission",
        "text",
        160,
        "ED return within 72 h; ICU readmission in the same hospitalization; hospital readmission within 30 or 60 days",
    ),
    Category(
        "length_of_stay",
        "Length of stay",
        "text",
        160,
        "ICU stay > 7 or 14 days; hospital stay > 3 or 7 days",
    ),
    Category(
        "escalation_of_care",
        "Escalation of care",
        "text",
        120,
        "ED patient hospitalized, transferred to the ICU within 12 h, or critical outcome",
    ),
    Category(
        "diagnosis",
        "Diagnosis",
        "text",
        160,
        "Next diagnoses of an admission or ED visit (ICD titles or CCS categories)",
    ),
    Category(
        "medication",
        "Medication",
        "text",
        320,
        "Next administered medication, prescriptions, ED medication reconciliation, ED dispensing-cabinet "
        "items, ICU input and ingredient items",
    ),
    Category(
        "procedure",
        "Procedure",
        "text",
        120,
        "Next procedures (ICD titles or CCS categories) and ICU procedure items",
    ),
    Category(
        "laboratory_microbiology",
        "Laboratory & microbiology",
        "text",
        80,
        "Next laboratory and microbiology tests",
    ),
    Category(
        "vitals_measurements",
        "Vitals & measurements",
        "text",
        160,
        "Next ICU charted, datetime, and output items; next outpatient measurements",
    ),
    Category("imaging_report", "Imaging report", "text", 40, "Next radiology examination"),
    Category("orders", "Orders", "text", 40, "Type of the next provider order"),
    Category(
        "encounter_flow",
        "Encounter & flow",
        "text",
        120,
        "Next admission type, clinical service, and transfer care unit",
    ),
    Category("next_event", "Next event", "text", 40, "Which EHR table the next event is recorded in"),
    Category(
        "cxr_finding_presence",
        "CXR finding presence",
        "multimodal",
        215,
        "Whether a finding is present in a CXR study (EHRXQA)",
    ),
    Category(
        "cxr_finding_enumeration",
        "CXR finding enumeration",
        "multimodal",
        182,
        "List the findings of a CXR study (EHRXQA and MedMod)",
    ),
    Category(
        "cxr_change_comparison",
        "CXR change comparison",
        "multimodal",
        222,
        "How findings change between two CXR studies (EHRXQA)",
    ),
    Category(
        "clinical_deterioration",
        "Clinical deterioration",
        "multimodal",
        125,
        "ICU death within the next 24 hours (MedMod)",
        aliases=("mortality_24h",),
    ),
    Category("mm_mortality", "Mortality", "multimodal", 125, "Death during the current ICU stay (MedMod)",
             aliases=("inpatient_mortality_mm",)),
    Category("phenotype", "Phenotype", "multimodal", 120, "Acute and chronic conditions of an ICU stay (MedMod)",
             aliases=("phenotype_ccs",)),
)


_BENCHMARK_WORDS: dict[Benchmark, str] = {
    "clinseek-bench-text": "text task",
    "clinseek-bench-mm": "multimodal category",
    "agentehr-bench": "AgentEHR-Bench task",
}
BUILD_SETS: dict[str, tuple[Benchmark, ...]] = {
    "clinseek": ("clinseek-bench-text", "clinseek-bench-mm"),
    "agentehr": ("agentehr-bench",),
}
"""The benchmarks one ``build_benchmark`` call draws (``benchmark="clinseek"`` or ``"agentehr"``); task
names are unique within each (``--tasks`` takes names)."""


class TaskRegistry:
    """Every task and card category, each registered once; read-only after construction.

    Raises:
        RegistryError: a task or category registered twice (the same benchmark and name, or one name in
            two benchmarks of one build), or a task whose category is not a card category.
    """

    def __init__(self, categories: Iterable[Category], tasks: Iterable[TaskSpec]) -> None:
        self._categories: dict[str, Category] = {}
        self._tasks: dict[tuple[Benchmark, str], TaskSpec] = {}
        for category in categories:
            if category.slug in self._categories:
                raise RegistryError(f"category {category.slug!r} is registered twice")
            self._categories[category.slug] = category
        for spec in tasks:
            self._register(spec)

    def _register(self, spec: TaskSpec) -> None:
        if (spec.benchmark, spec.name) in self._tasks:
            raise RegistryError(f"task {spec.name!r} of {spec.benchmark} is registered twice")
        for group in BUILD_SETS.values():
            clash = [b for b in group if b != spec.benchmark and spec.benchmark in group and (b, spec.name) in self._tasks]
            if clash:
                raise RegistryError(f"task {spec.name!r} of {spec.benchmark} is registered twice (also in {clash[0]})")
        if spec.category not in self._categories:
            raise RegistryError(f"task {spec.name!r}: unknown category {spec.category!r}")
        self._tasks[(spec.benchmark, spec.name)] = spec

    @property
    def categories(self) -> tuple[Category, ...]:
        """The card's categories, in the card's order."""
        return tuple(self._categories.values())

    def tasks(self, benchmark: Benchmark | None = None) -> tuple[TaskSpec, ...]:
        """The tasks of ``benchmark`` (all when ``None``): by benchmark, then in declaration order."""
        order = {b: i for i, b in enumerate(BENCHMARKS)}
        found = [t for t in self._tasks.values() if benchmark is None or t.benchmark == benchmark]
        return tuple(sorted(found, key=lambda t: order[t.benchmark]))

    def get(self, name: str, benchmark: Benchmark = "clinseek-bench-text") -> TaskSpec:
        """The task ``name`` of ``benchmark``.

        Raises:
            RegistryError: not a task of that benchmark (with the closest names).
        """
        spec = self._tasks.get((benchmark, name))
        if spec is None:
            known = [t.name for t in self.tasks(benchmark)]
            hint = did_you_mean(name, known) or f"; known: {', '.join(sorted(known))}"
            raise RegistryError(f"unknown {_BENCHMARK_WORDS[benchmark]} {name!r}{hint}")
        return spec

    def find(self, name: str, benchmark: Benchmark | None = None) -> TaskSpec | None:
        """The task ``name`` (of ``benchmark``, else of the first benchmark that has it), or ``None``."""
        for b in (benchmark,) if benchmark else BENCHMARKS:
            if (b, name) in self._tasks:
                return self._tasks[(b, name)]
        return None

    def category(self, slug: str) -> Category:
        """The card category with this slug.

        Raises:
            RegistryError: unknown slug.
        """
        try:
            return self._categories[slug]
        except KeyError:
            hint = did_you_mean(slug, self._categories) or f"; known: {', '.join(self._categories)}"
            raise RegistryError(f"unknown category {slug!r}{hint}") from None


TASKS = TaskRegistry(CATEGORIES, (*RISK_TASKS, *DECISION_TASKS, *MM_TASKS, *AGENTEHR_TASKS))
"""The registry of every task clinseek knows (see the module docstring)."""

TEXT_TASKS: tuple[TaskSpec, ...] = TASKS.tasks("clinseek-bench-text")
"""The 45 EHR-Bench subtasks of ClinSeek-Bench-Text: the 18 risk-prediction tasks, then the 27 decision-making ones."""
AGENTEHR_TABLE3_TASKS: tuple[str, ...] = tuple(t.name for t in AGENTEHR_TASKS if t.table3)
"""The five tasks of the paper's Table 3 (its average is over these; prescriptions is reported apart)."""


MM_ROW_TASKS: tuple[str, ...] = tuple(sorted({u for t in MM_TASKS for u in t.upstream_tasks}))
"""The task names of ClinSeek-Bench-MM rows (the released split and the builder's): the multimodal
categories' upstream tasks (``ehrxqa_image``, ``medmod_*``)."""


def known_tasks(kind: str) -> tuple[str, ...]:
    """The task names a manifest of ``kind`` (``text``, ``multimodal``, ``agentehr``) may use.

    Raises:
        RegistryError: an unknown kind.
    """
    found = {
        "text": tuple(t.name for t in TEXT_TASKS),
        "multimodal": MM_ROW_TASKS,
        "agentehr": tuple(t.name for t in AGENTEHR_TASKS),
    }.get(kind)
    if found is None:
        raise RegistryError(f"unknown manifest kind {kind!r}; known: text, multimodal, agentehr")
    return found


def unknown_task(task: str, known: Sequence[str], *, what: str = "task") -> str | None:
    """``None`` when ``task`` is one of ``known``, else the refusal: "did you mean ...?" and every known name."""
    if task in known:
        return None
    return f"unknown {what} {task!r}{did_you_mean(task, known)}; known: {', '.join(known)}"


def get_task(name: str, benchmark: Benchmark = "clinseek-bench-text") -> TaskSpec:
    """The task ``name`` of ``benchmark`` (default: the text subtask, exact EHR-Bench spelling).

    Raises:
        RegistryError: not a task of that benchmark (the 45 text subtasks by default).
    """
    return TASKS.get(name, benchmark)


def find_task(name: str, benchmark: Benchmark | None = None) -> TaskSpec | None:
    """The task called ``name`` in ``benchmark`` (else in the first benchmark that has it), or ``None``."""
    return TASKS.find(name, benchmark)


def get_category(slug: str) -> Category:
    """The card category with this slug.

    Raises:
        RegistryError: unknown slug.
    """
    return TASKS.category(slug)


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower().replace("&", "_")).strip("_")


_CATEGORY_LOOKUP = (
    {_key(c.slug): c.slug for c in CATEGORIES}
    | {_key(c.title): c.slug for c in CATEGORIES if c.split == "text"}
    | {_key(alias): c.slug for c in CATEGORIES for alias in c.aliases}
)


def _upstream_categories() -> dict[str, str]:
    """Manifest task names of exactly one multimodal category (the MedMod tasks), with that category."""
    owners: dict[str, list[str]] = {}
    for spec in TASKS.tasks("clinseek-bench-mm"):
        for task in spec.upstream_tasks:
            owners.setdefault(task, []).append(spec.category)
    return {task: cats[0] for task, cats in owners.items() if len(cats) == 1}


_MM_TASK_CATEGORY = _upstream_categories()
REPORT_HIDING_CATEGORIES = frozenset(t.category for t in MM_TASKS if t.hides_linked_reports)
"""Multimodal categories whose answer a linked study's report states: its text is hidden by default."""
REPORT_HIDING_TASKS = frozenset(u for t in MM_TASKS if t.hides_linked_reports for u in t.upstream_tasks)
"""Manifest task names of those categories (``ehrxqa_image``, ``medmod_radiology``)."""


def normalise_category(value: str | None, *, task: str) -> str | None:
    """Map a manifest ``category`` (slug, card title or alias, any case) to a slug; derive it from ``task``
    when absent.

    A multimodal "Mortality" is told apart from the text one by its task (``medmod_*``).
    Returns ``None`` when neither the value nor the task decides the category.
    """
    if task in _MM_TASK_CATEGORY and (value is None or _key(value) in {"mortality", "mm_mortality"}):
        return _MM_TASK_CATEGORY[task]
    if value:
        return _CATEGORY_LOOKUP.get(_key(value), _key(value))
    spec = TASKS.find(task)
    return spec.category if spec else None


def category_for_mm_task(task: str) -> str | None:
    """The category a MedMod task always belongs to (EHRXQA rows need the manifest's ``category``)."""
    return _MM_TASK_CATEGORY.get(task)


__all__ = [
    "AGENTEHR_TABLE3_TASKS",
    "AGENTEHR_TASKS",
    "BUILD_SETS",
    "CATEGORIES",
    "DECISION_TASKS",
    "MM_ROW_TASKS",
    "MM_TASKS",
    "REPORT_HIDING_CATEGORIES",
    "REPORT_HIDING_TASKS",
    "RISK_TASKS",
    "TASKS",
    "TEXT_TASKS",
    "TaskRegistry",
    "category_for_mm_task",
    "find_task",
    "get_category",
    "get_task",
    "known_tasks",
    "normalise_category",
    "unknown_task",
]
