"""Corpus documents for lab tests (``hosp.d_labitems``) and ICU items (``icu.d_items``).

Sources: the MIT-LCP mimic-code concept maps clinseek ships (:func:`clinseek.schema.concept_map`; ``d_labitems_to_loinc.csv``: every
MIMIC-IV lab itemid with label, fluid, category, unit and LOINC; ``meas_chartevents_main.csv``:
the main charted vitals with LOINC) and, when a store is given, that store's dictionaries
(``hosp.d_labitems``, ``icu.d_items`` with ``lownormalvalue``/``highnormalvalue``) and the most
common reference range of each lab item in ``hosp.labevents`` (``ref_range_lower`` /
``ref_range_upper``) among those at least :data:`MIN_RANGE_PATIENTS` patients carry. Only
population-level constants are read from a store: never a patient's row.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..schema import concept_map
from ._document import KnowledgeDocument, kb_url

if TYPE_CHECKING:
    import duckdb

    from ..store import Store



@dataclass(frozen=True, slots=True)
class LabItem:
    """What the corpus says about one ``hosp.d_labitems`` itemid."""

    itemid: int
    label: str
    fluid: str = ""
    category: str = ""
    unit: str = ""
    loinc: str = ""
    loinc_name: str = ""
    ref_low: float | None = None
    ref_high: float | None = None
    rows: int = 0
    """``labevents_row_count`` of MIMIC-IV v2.0 in the concept map (0 when unknown)."""


@dataclass(frozen=True, slots=True)
class IcuItem:
    """What the corpus says about one ``icu.d_items`` itemid."""

    itemid: int
    label: str
    abbreviation: str = ""
    linksto: str = ""
    category: str = ""
    unit: str = ""
    loinc: str = ""
    normal: tuple[float | None, float | None] = field(default=(None, None))


def _lab_items_from_maps() -> dict[int, LabItem]:
    out: dict[int, LabItem] = {}
    for row in concept_map("d_labitems_to_loinc.csv"):
        itemid = int(row["itemid (omop_source_code)"])
        loinc = row["omop_concept_code"] if row["omop_vocabulary_id"] == "LOINC" else ""
        rows = int(row["labevents_row_count"]) if row["labevents_row_count"].isdigit() else 0
        out[itemid] = LabItem(itemid, row["label"], row["fluid"], row["category"], row["valueuom"], loinc,
                              row["omop_concept_name"] if loinc else "", rows=rows)
    return out


def _icu_items_from_maps() -> dict[int, IcuItem]:
    out: dict[int, IcuItem] = {}
    for row in concept_map("meas_chartevents_main.csv"):
        itemid = int(row["itemid (omop_source_code)"])
        loinc = row["omop_concept_code"] if row["omop_vocabulary_id"] == "LOINC" else ""
        out[itemid] = IcuItem(itemid, row["label"], linksto="chartevents", loinc=loinc)
    return out


MIN_RANGE_PATIENTS = 5
"""A reference range is shown only when at least this many distinct patients' rows carry it.

The corpus is built from the whole store, future rows of every patient included; a population
constant shared by several patients reveals nothing about one patient's future, whereas a range
that only one patient's rows carry could (it would show that patient had that test)."""

_REF_RANGES = f"""
SELECT itemid, ref_range_lower, ref_range_upper FROM (
  SELECT itemid, ref_range_lower, ref_range_upper, count(*) AS n, count(DISTINCT subject_id) AS patients
  FROM hosp.labevents
  WHERE ref_range_lower IS NOT NULL OR ref_range_upper IS NOT NULL GROUP BY ALL)
WHERE patients >= {MIN_RANGE_PATIENTS}
QUALIFY row_number() OVER (PARTITION BY itemid ORDER BY n DESC, ref_range_lower, ref_range_upper) = 1
"""


def reference_ranges(con: duckdb.DuckDBPyConnection) -> dict[int, tuple[float | None, float | None]]:
    """The most common ``(ref_range_lower, ref_range_upper)`` of each lab itemid in ``hosp.labevents``
    (counted in rows) among the ranges at least :data:`MIN_RANGE_PATIENTS` distinct patients carry."""
    return {itemid: (low, high) for itemid, low, high in con.execute(_REF_RANGES).fetchall()}


def _merge_labs(labs: dict[int, LabItem], con: duckdb.DuckDBPyConnection, store: Store) -> None:
    if store.has_table("hosp.d_labitems"):
        for itemid, label, fluid, category in con.execute(
            "SELECT itemid, label, fluid, category FROM hosp.d_labitems"
        ).fetchall():
            lab = labs.get(itemid) or LabItem(itemid, label or "")
            labs[itemid] = replace(lab, label=label or lab.label, fluid=fluid or lab.fluid,
                                   category=category or lab.category)
    if store.has_table("hosp.labevents"):
        for itemid, (low, high) in reference_ranges(con).items():
            if itemid in labs:
                labs[itemid] = replace(labs[itemid], ref_low=low, ref_high=high)


def _merge_icu(icu: dict[int, IcuItem], con: duckdb.DuckDBPyConnection, store: Store) -> None:
    if not store.has_table("icu.d_items"):
        return
    rows = con.execute(
        "SELECT itemid, label, abbreviation, linksto, category, unitname, lownormalvalue, highnormalvalue "
        "FROM icu.d_items"
    ).fetchall()
    for itemid, label, abbr, linksto, category, unit, low, high in rows:
        item = icu.get(itemid) or IcuItem(itemid, label or "")
        icu[itemid] = replace(item, label=label or item.label, abbreviation=abbr or "", linksto=linksto or "",
                              category=category or "", unit=unit or "", normal=(low, high))


def _merge_store(labs: dict[int, LabItem], icu: dict[int, IcuItem], store: Store) -> None:
    con = store.connect()
    try:
        _merge_labs(labs, con, store)
        _merge_icu(icu, con, store)
    finally:
        con.close()


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def lab_document(items: list[LabItem]) -> KnowledgeDocument:
    """The document of one lab test (the itemids sharing a label, fluid and category, most used first):
    label, specimen, unit, LOINC and reference range."""
    item = items[0]
    ranged = next((i for i in items if i.ref_low is not None or i.ref_high is not None), None)
    where = ", ".join(x for x in (item.fluid, item.category) if x)
    others = f" (also {', '.join(str(i.itemid) for i in items[1:])})" if len(items) > 1 else ""
    lines = [f"MIMIC-IV hosp.d_labitems itemid {item.itemid}{others}: {item.label}.",
             f"Fluid {item.fluid or 'not recorded'}; category {item.category or 'not recorded'}; "
             f"unit {item.unit or 'none recorded'}."]
    if item.loinc:
        lines.append(f"LOINC {item.loinc}: {item.loinc_name}.")
    if ranged is not None:
        lines.append(f"Reference range {_num(ranged.ref_low)} - {_num(ranged.ref_high)} {item.unit}".rstrip()
                     + " (most common in hosp.labevents).")
    prior = math.log10(1 + sum(i.rows for i in items)) / 10  # 0 .. ~0.8: the most used test first on ties
    return KnowledgeDocument(kb_url("labs", str(item.itemid)),
                             f"Lab test {item.label} ({where}), itemid {item.itemid}", "\n".join(lines), "labs",
                             prior=prior)


def _lab_groups(labs: dict[int, LabItem]) -> list[list[LabItem]]:
    groups: dict[tuple[str, str, str], list[LabItem]] = {}
    for item in labs.values():
        groups.setdefault((item.label.lower(), item.fluid.lower(), item.category.lower()), []).append(item)
    ordered = [sorted(g, key=lambda i: (-i.rows, i.itemid)) for g in groups.values()]
    return sorted(ordered, key=lambda g: g[0].itemid)


def icu_document(item: IcuItem) -> KnowledgeDocument:
    """The document of one ICU item: label, abbreviation, table, unit, normal range."""
    lines = [f"MIMIC-IV icu.d_items itemid {item.itemid}: {item.label}"
             + (f" (abbreviation {item.abbreviation})" if item.abbreviation else "") + "."]
    if item.linksto:
        lines.append(f"Recorded in icu.{item.linksto}." + (f" Category: {item.category}." if item.category else ""))
    if item.unit:
        lines.append(f"Unit: {item.unit}.")
    if item.loinc:
        lines.append(f"LOINC {item.loinc}.")
    low, high = item.normal
    if low is not None or high is not None:
        lines.append(f"Normal range (lownormalvalue - highnormalvalue): {_num(low)} - {_num(high)} {item.unit}".rstrip() + ".")
    return KnowledgeDocument(kb_url("icu_items", str(item.itemid)), f"ICU item {item.label}, itemid {item.itemid}",
                             "\n".join(lines), "icu_items")


def item_documents(store: Store | None = None) -> Iterator[KnowledgeDocument]:
    """Lab test and ICU item documents from the concept maps, enriched from ``store`` when given."""
    labs, icu = _lab_items_from_maps(), _icu_items_from_maps()
    if store is not None:
        _merge_store(labs, icu, store)
    for group in _lab_groups(labs):
        yield lab_document(group)
    for itemid in sorted(icu):
        yield icu_document(icu[itemid])
