"""The MIT-LCP mimic-code concept maps clinseek ships (``concept_map/README.md``: source, license, files).

They hold real MIMIC-IV itemids with their labels, units and LOINC / RxNorm codes: the synthetic store's
``d_labitems`` and ``d_items`` are built from them, and the offline knowledge index documents the items.
"""

from __future__ import annotations

import csv
import io
from functools import cache
from importlib import resources

CONCEPT_MAP_FILES: tuple[str, ...] = (
    "d_labitems_to_loinc.csv",
    "lab_itemid_to_loinc.csv",
    "meas_chartevents_main.csv",
    "inputevents_to_rxnorm.csv",
    "outputevents_to_loinc.csv",
    "proc_itemid.csv",
    "proc_datetimeevents.csv",
)
"""The shipped files (``clinseek/schema/concept_map/``)."""

CONCEPT_MAP_SOURCE = "MIT-LCP mimic-code mimic-iv/mapping (MIT), as of 2023-12-13"
"""Where the files come from, for provenance records (the offline knowledge index)."""


@cache
def _text(name: str) -> str:
    return resources.files("clinseek.schema").joinpath("concept_map").joinpath(name).read_text(encoding="utf-8")


def concept_map(name: str) -> list[dict[str, str]]:
    """The rows of one shipped concept map as dicts keyed by its header (a fresh list each call).

    Raises:
        KeyError: ``name`` is not one of :data:`CONCEPT_MAP_FILES`.
    """
    if name not in CONCEPT_MAP_FILES:
        raise KeyError(f"{name!r} is not a shipped concept map; shipped: {', '.join(CONCEPT_MAP_FILES)}")
    return list(csv.DictReader(io.StringIO(_text(name))))
