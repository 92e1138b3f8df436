"""The records of the task registry: a card category, a task, and the parts a task is made of.

A task is declared once, as a :class:`TaskSpec` beside the code that builds its labels
(``_risk.py``, ``_decision.py``, ``_mm_build.py``, ``_agentehr.py``); :mod:`clinseek.bench._tasks`
collects them into the one registry that the builder, the generated docs (``docs/tasks.md``),
``clinseek tasks``, the agent's prompts and scoring's grouping read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ._anchor import BuildContext

Benchmark = Literal["clinseek-bench-text", "clinseek-bench-mm", "agentehr-bench"]
"""A benchmark a task belongs to (the same names :attr:`clinseek.bench.Question.benchmark` takes)."""

TaskType = Literal["risk_prediction", "decision_making", "multimodal"]
"""``risk_prediction`` (yes/no), ``decision_making`` (multi-label) or ``multimodal`` (CXR questions)."""

BENCHMARKS: tuple[Benchmark, ...] = ("clinseek-bench-text", "clinseek-bench-mm", "agentehr-bench")
"""Every benchmark, in the order the registry lists their tasks."""

EHR_BENCH_SOURCE = "EHR-Bench (EHR-R1, MAGIC-AI4Med/EHR-R1)"
AGENTEHR_SOURCE = "AgentEHR-Bench (BlueZeros/AgentEHR, data_preprocess/meta_sql_data_generation.py)"

Builder = Callable[["BuildContext"], Iterator[Any]]
"""A task's label builder: yields, for a shuffled pool of anchors, ``(anchor, label)`` (risk: ``True``,
``False`` or ``None`` when the data cannot decide; decision: the gold item names, empty = drop) or, for
a multimodal task, ``(anchor, label, info)`` (``info``: linked studies and the question asked)."""


@dataclass(frozen=True, slots=True)
class Category:
    """A card category.

    Attributes:
        slug: stable identifier (``mortality``, ``cxr_finding_presence``).
        title: the card's name ("Mortality", "CXR finding presence").
        split: ``text`` or ``multimodal``.
        release_rows: rows of this category in the released benchmark (dataset card).
        description: the card's one-line description.
        aliases: other names rows use for it (the reference classifier's ``mortality_24h``, ...).
    """

    slug: str
    title: str
    split: Literal["text", "multimodal"]
    release_rows: int
    description: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AgentRole:
    """The AgentEHR-Bench role template of a task: "You are {who}. Objective: ... predict {predicts}."."""

    who: str
    predicts: str


@dataclass(frozen=True, slots=True)
class CandidateTable:
    """How an AgentEHR-Bench task's candidate table is made (:func:`clinseek.bench.store_candidate_table`).

    Attributes:
        imported: its table names in AgentEHR's ``candidate_table.db`` (the first one present is read).
        kind: ``dictionary`` (``sql`` returns the rows, ``candidate`` first, the same for every patient),
            ``coded`` (``sql`` returns ``icd_code, icd_version, long_title`` of a dictionary; each code is
            listed under every category ``mapper`` gives it, and each of ``categories()`` appears) or
            ``others`` (``sql`` returns ``candidate``, ``n`` and ``only``: a name is in patient S's table
            when a patient other than S has it).
        sql: the store query.
        needs: the store table it reads (qualified).
    """

    imported: tuple[str, ...]
    kind: Literal["dictionary", "coded", "others"]
    sql: str
    needs: str
    categories: Callable[[], tuple[str, ...]] | None = None
    mapper: Callable[[str, int], tuple[str, ...]] | None = None


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """One benchmark task, declared once.

    Attributes:
        name: the task name as rows carry it (EHR-Bench spelling, typos included:
            ``ED_ICU_Tranfer_12hour``); a multimodal task is named by its card category slug.
        benchmark: the benchmark it belongs to.
        task_type: ``risk_prediction``, ``decision_making`` or ``multimodal``.
        category: slug of its card category (:func:`clinseek.bench.get_category` gives the card's title).
        instruction: the task instruction (EHR-Bench paragraph; AgentEHR-Bench objective; multimodal:
            the question asked).
        tables: store tables (qualified) the builder needs for this task.
        prediction_time: the cutoff rule: when the question is asked.
        label_definition: how the gold answer is derived from what the cutoff hides.
        candidate_source: the candidates rule: where the candidate answers come from.
        label_source: the definition's origin (EHR-Bench / EHR-R1, AgentEHR, MedMod, EHRXQA).
        target: ``hadm_id`` / ``stay_id`` when the question hides that encounter's codes.
        build: the label builder (``None``: the builder cannot build it, ``not_built`` says why).
        not_built: why the task has no builder.
        vocabulary: the store-wide candidate vocabulary of a decision task (never the union of the
            drawn labels alone, which would give the answers away); the builder adds the drawn labels.
        exclusions: counts, over the store, of what the task never draws by design, by reason
            (written to ``build_manifest.json``).
        role: the AgentEHR-Bench role template of the agent prompt.
        candidate_table: how an AgentEHR-Bench task's candidate table is made.
        table3: one of the five tasks the paper's Table 3 averages (AgentEHR-Bench).
        upstream_tasks: the manifest task names of a multimodal category (``ehrxqa_image``, ``medmod_*``).
        row_task: the manifest task name the builder writes for a multimodal category.
        yes_no: a multimodal category answered yes or no (the builder balances the answers).
        hides_linked_reports: a multimodal category whose answer a linked study's report states
            (its text is hidden from the episode by default).
    """

    name: str
    benchmark: Benchmark
    task_type: TaskType
    category: str
    instruction: str
    tables: tuple[str, ...]
    prediction_time: str
    label_definition: str
    candidate_source: str
    label_source: str = EHR_BENCH_SOURCE
    target: Literal["hadm_id", "stay_id"] | None = None
    build: Builder | None = None
    not_built: str | None = None
    vocabulary: Callable[[BuildContext], Iterable[str]] | None = None
    exclusions: Callable[[BuildContext], dict[str, int]] | None = None
    role: AgentRole | None = None
    candidate_table: CandidateTable | None = None
    table3: bool = False
    upstream_tasks: tuple[str, ...] = ()
    row_task: str | None = None
    yes_no: bool = False
    hides_linked_reports: bool = False
