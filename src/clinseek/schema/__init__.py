"""The schema registry: one declarative description of every MIMIC table clinseek knows.

It is the single source for ingest (file names, columns, types), the synthetic generator, the
temporal policy (event-time column or inherited parent time, every column's "known at" class
from which the masks derive, target-encounter keys), the EHR tools (table descriptions, dictionary joins) and the docs.

Covered releases: MIMIC-IV 3.1 ``hosp`` and ``icu``, MIMIC-IV-ED 2.2, MIMIC-IV-Note 2.2,
MIMIC-CXR / MIMIC-CXR-JPG 2.0.0. Column names are exactly as in the releases.
"""

from ._classes import CLASS_REASONS, class_masks, columns_of
from ._concept_maps import CONCEPT_MAP_FILES, CONCEPT_MAP_SOURCE, concept_map
from ._cxr import CHEXPERT_LABELS, STUDY_TIME_SQL
from ._describe import describe_table, tables_markdown
from ._encounter import ENCOUNTER_IDS, Encounter, encounter_mask, encounter_masks
from ._model import (
    KNOWN_AT,
    MODULES,
    Column,
    DictJoin,
    DuckType,
    EventTime,
    KnownAt,
    Mask,
    Module,
    ParentTime,
    Pending,
    Renumbered,
    Sequence,
    Table,
    Visibility,
    shown_at,
)
from ._registry import check_registry, class_problems, get_table, modules, tables

__all__ = [
    "CHEXPERT_LABELS",
    "CLASS_REASONS",
    "CONCEPT_MAP_FILES",
    "CONCEPT_MAP_SOURCE",
    "ENCOUNTER_IDS",
    "KNOWN_AT",
    "MODULES",
    "STUDY_TIME_SQL",
    "Column",
    "DictJoin",
    "DuckType",
    "Encounter",
    "EventTime",
    "KnownAt",
    "Mask",
    "Module",
    "ParentTime",
    "Pending",
    "Renumbered",
    "Sequence",
    "Table",
    "Visibility",
    "check_registry",
    "class_masks",
    "class_problems",
    "columns_of",
    "concept_map",
    "describe_table",
    "encounter_mask",
    "encounter_masks",
    "get_table",
    "modules",
    "shown_at",
    "tables",
    "tables_markdown",
]
