"""The schema registry: one declarative description of every MIMIC table clinseek knows.

It is the single source for ingest (file names, columns, types), the synthetic generator, the
temporal policy (event-time column or inherited parent time, outcome-revealing columns,
target-encounter keys), the EHR tools (table descriptions, dictionary joins) and the docs.

Covered releases: MIMIC-IV 3.1 ``hosp`` and ``icu``, MIMIC-IV-ED 2.2, MIMIC-IV-Note 2.2,
MIMIC-CXR / MIMIC-CXR-JPG 2.0.0. Column names are exactly as in the releases.
"""

from ._concept_maps import CONCEPT_MAP_FILES, CONCEPT_MAP_SOURCE, concept_map
from ._cxr import CHEXPERT_LABELS, STUDY_TIME_SQL
from ._describe import describe_table, tables_markdown
from ._encounter import ENCOUNTER_IDS, encounter_mask, encounter_masks
from ._model import (
    MODULES,
    Column,
    DictJoin,
    DuckType,
    EventTime,
    Mask,
    Module,
    ParentTime,
    Table,
    Visibility,
)
from ._registry import check_registry, get_table, modules, tables

__all__ = [
    "CHEXPERT_LABELS",
    "CONCEPT_MAP_FILES",
    "CONCEPT_MAP_SOURCE",
    "ENCOUNTER_IDS",
    "MODULES",
    "STUDY_TIME_SQL",
    "Column",
    "DictJoin",
    "DuckType",
    "EventTime",
    "Mask",
    "Module",
    "ParentTime",
    "Table",
    "Visibility",
    "check_registry",
    "concept_map",
    "describe_table",
    "encounter_mask",
    "encounter_masks",
    "get_table",
    "modules",
    "tables",
    "tables_markdown",
]
