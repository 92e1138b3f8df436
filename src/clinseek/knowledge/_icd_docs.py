"""Corpus documents for ICD codes, CCS diagnosis and procedure categories and the 25 MedMod phenotypes."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from ._ccs_procedure_docs import ccs_procedure_documents, ccs_procedure_line
from ._document import KnowledgeDocument, kb_url
from ._icd import IcdCode, ccs_grouper, icd_codes
from ._phenotypes import MEDMOD_PHENOTYPES

_MAX_CODES_LISTED = 150
GROUP_PRIOR = 1.0
"""Score bonus of a CCS category page (half of it for a phenotype page) over single-code pages."""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _system(code: IcdCode) -> str:
    if code.version == 10:
        return "ICD-10-CM" if code.kind == "diagnosis" else "ICD-10-PCS"
    return "ICD-9-CM"


def _code_source(code: IcdCode) -> str:
    return {("diagnosis", 10): "icd10cm", ("diagnosis", 9): "icd9cm",
            ("procedure", 9): "icd9proc", ("procedure", 10): "icd10pcs"}[(code.kind, code.version)]


def _phenotype_of() -> dict[int, str]:
    return {ccs: name for name, numbers in MEDMOD_PHENOTYPES.items() for ccs in numbers}


def code_document(code: IcdCode, ccs_names: dict[int, str], phenotype_of: dict[int, str]) -> KnowledgeDocument:
    """The document of one ICD code: title, MIMIC form, CCS/CCSR groups and phenotype.

    Repeated lines (the group lines) are identical across codes of a group, which keeps the
    index small and its build fast.
    """
    system = _system(code)
    lines = [f"{system} {code.kind} code {code.dotted} (MIMIC icd_code {code.code}, icd_version {code.version})."]
    if code.ccs is not None:
        lines.append(f"CCS category {code.ccs}: [{ccs_names[code.ccs]}]({kb_url('ccs', str(code.ccs))}).")
    elif code.kind == "diagnosis":
        lines.append("CCS category: none.")
    elif code.version == 10 and (procedure_line := ccs_procedure_line(code.code)):
        lines.append(procedure_line)
    if code.via_icd9:
        lines.append(f"ICD-9-CM equivalent (CMS GEM): {code.via_icd9}.")
    if code.ccsr:
        lines.append(f"CCSR category {code.ccsr}.")
    if code.ccs in phenotype_of:
        name = phenotype_of[code.ccs]
        lines.append(f"MedMod phenotype: [{name}]({kb_url('phenotype', _slug(name))}).")
    return KnowledgeDocument(
        kb_url(_code_source(code), code.code), f"{system} {code.dotted}: {code.title}", "\n".join(lines),
        _code_source(code),
    )


def _listing(codes: list[IcdCode]) -> list[str]:
    shown = [f"- {c.dotted} {c.title}" for c in codes[:_MAX_CODES_LISTED]]
    more = len(codes) - _MAX_CODES_LISTED
    return shown + ([f"- and {more} more"] if more > 0 else [])


def ccs_document(number: int, name: str, members: list[IcdCode], phenotype: str | None) -> KnowledgeDocument:
    """The document of one CCS single-level diagnosis category with its ICD-9/10 member codes."""
    icd9 = [c for c in members if c.version == 9]
    icd10 = [c for c in members if c.version == 10]
    lines = [
        f"HCUP Clinical Classifications Software (CCS) single-level diagnosis category {number}: {name}.",
        "ICD-10-CM codes belong to it through the CMS GEM mapping to ICD-9-CM.",
    ]
    if phenotype:
        lines.append(f"Part of the MedMod phenotype [{phenotype}]({kb_url('phenotype', _slug(phenotype))}).")
    lines += [f"ICD-9-CM codes ({len(icd9)}):", *_listing(icd9), f"ICD-10-CM codes ({len(icd10)}):", *_listing(icd10)]
    return KnowledgeDocument(kb_url("ccs", str(number)), f"CCS {number}: {name}", "\n".join(lines), "ccs",
                             prior=GROUP_PRIOR)


def phenotype_document(name: str, numbers: tuple[int, ...], ccs_names: dict[int, str]) -> KnowledgeDocument:
    """The definition of one MedMod phenotype by its CCS categories."""
    groups = "; ".join(f"[CCS {n} {ccs_names[n]}]({kb_url('ccs', str(n))})" for n in numbers)
    text = "\n".join([
        f"{name} is one of the 25 acute and chronic conditions of the MedMod / mimic3-benchmarks "
        "phenotyping task (Harutyunyan et al. 2019), used by ClinSeek-Bench-MM's phenotype category.",
        f"An ICU stay has this phenotype when its admission is coded with a diagnosis in: {groups}.",
        "ICD-10-CM codes count through the CMS GEM mapping to ICD-9-CM, then CCS.",
    ])
    return KnowledgeDocument(kb_url("phenotype", _slug(name)), f"MedMod phenotype: {name}", text, "phenotypes",
                             prior=GROUP_PRIOR / 2)


def icd_documents(*, procedures_icd10: bool = False) -> Iterator[KnowledgeDocument]:
    """Documents for every ICD code, every CCS diagnosis and procedure category and the 25 MedMod phenotypes."""
    ccs_names, _ = ccs_grouper()
    phenotype_of = _phenotype_of()
    members: dict[int, list[IcdCode]] = defaultdict(list)
    for code in icd_codes(procedures_icd10=procedures_icd10):
        if code.ccs is not None:
            members[code.ccs].append(code)
        yield code_document(code, ccs_names, phenotype_of)
    for number, name in sorted(ccs_names.items()):
        yield ccs_document(number, name, members[number], phenotype_of.get(number))
    yield from ccs_procedure_documents(GROUP_PRIOR)
    for name, numbers in MEDMOD_PHENOTYPES.items():
        yield phenotype_document(name, numbers, ccs_names)
