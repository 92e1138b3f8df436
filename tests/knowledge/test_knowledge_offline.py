"""The offline index answers the clinical look-ups the tasks need, from a corpus generated at first use."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from clinseek.knowledge import (
    MEDMOD_PHENOTYPES,
    Knowledge,
    KnowledgeConfig,
    KnowledgeIndex,
    ccs_grouper,
    icd_codes,
    load_or_build_index,
    open_knowledge,
)


def _top3(knowledge: Knowledge, query: str) -> list[str]:
    results, _ = knowledge.search(query, 3)
    return [r.url for r in results]


@pytest.mark.parametrize(
    ("query", "url"),
    [
        ("CCS category of ICD-10 I50.23", "clinseek-kb://icd10cm/I5023"),
        ("CCS category of ICD-9 428.0", "clinseek-kb://icd9cm/4280"),
        ("ICD code for acute on chronic diastolic heart failure",
         ("clinseek-kb://icd10cm/I5033", "clinseek-kb://icd9cm/42833")),
        ("pneumonia J18.9 CCS", "clinseek-kb://icd10cm/J189"),
        ("lactate", "clinseek-kb://labs/50813"),
        ("reference range of potassium", "clinseek-kb://labs/50971"),
        ("serum creatinine reference range", "clinseek-kb://labs/50912"),
        ("heart rate ICU item", "clinseek-kb://icu_items/220045"),
        ("MedMod phenotype septicemia", "clinseek-kb://phenotype/septicemia-except-in-labor"),
        ("which CCS categories define the phenotype acute cerebrovascular disease",
         "clinseek-kb://phenotype/acute-cerebrovascular-disease"),
        ("CCS 108 congestive heart failure nonhypertensive", "clinseek-kb://ccs/108"),
        ("ICD-9 procedure 96.71 continuous invasive mechanical ventilation", "clinseek-kb://icd9proc/9671"),
        ("task definition ICU_Mortality_1day", "clinseek-kb://tasks/ICU_Mortality_1day"),
    ],
)
def test_lookups_find_the_right_entry_in_the_top_3(
    full_knowledge: Knowledge, query: str, url: str | tuple[str, ...]
) -> None:
    wanted = {url} if isinstance(url, str) else set(url)
    top3 = _top3(full_knowledge, query)
    assert wanted & set(top3), f"{query!r} -> {top3}"


def test_the_icd_page_names_its_ccs_category(full_knowledge: Knowledge) -> None:
    page = full_knowledge.fetch("clinseek-kb://icd10cm/I5023")
    assert "CCS category 108" in page.text and "Congestive heart failure; nonhypertensive" in page.text
    assert "I50.23" in page.title and "42823" in page.text


def test_the_potassium_page_has_the_store_reference_range_and_unit(full_knowledge: Knowledge) -> None:
    text = full_knowledge.fetch("clinseek-kb://labs/50971").text
    assert "3.3 - 5.1 mEq/L" in text  # the demo's most common ref_range_lower / ref_range_upper
    assert "LOINC 2823-3" in text


def test_icu_items_come_from_the_store_dictionary(full_knowledge: Knowledge) -> None:
    text = full_knowledge.fetch("clinseek-kb://icu_items/220045").text
    assert "abbreviation HR" in text and "bpm" in text and "icu.chartevents" in text


def test_ccs_mapping_is_the_benchmark_builders(full_knowledge: Knowledge) -> None:
    from clinseek.bench._vocab import icd_to_ccs

    names, _ = ccs_grouper()
    codes = [c for c in icd_codes() if c.kind == "diagnosis"]
    for code in random.Random(3).sample(codes, 400):
        expected = icd_to_ccs(code.code, code.version)
        assert ((names[code.ccs],) if code.ccs else ()) == expected, code


def test_phenotype_table_is_the_benchmark_builders() -> None:
    from clinseek.bench._vocab import MEDMOD_PHENOTYPES as BENCH_PHENOTYPES

    assert MEDMOD_PHENOTYPES == BENCH_PHENOTYPES
    assert len(MEDMOD_PHENOTYPES) == 25


def test_the_index_is_cached_on_disk_by_version(full_knowledge: Knowledge, demo_store: Path, kb_cache: Path) -> None:
    version = full_knowledge.describe()["corpus_version"]
    assert (kb_cache / "offline" / f"index-{version}" / "meta.json").exists()

    def never() -> list:  # type: ignore[type-arg]
        raise AssertionError("the cached index should have been loaded, not rebuilt")

    loaded = load_or_build_index(kb_cache / "offline", version, never)
    assert len(loaded) == full_knowledge.describe()["documents"]
    assert loaded.search("CCS category of ICD-10 I50.23", 1)[0].document.url == "clinseek-kb://icd10cm/I5023"


def test_a_failed_build_leaves_nothing_behind(tmp_path: Path) -> None:
    def broken() -> list:  # type: ignore[type-arg]
        raise RuntimeError("generator failed")

    with pytest.raises(RuntimeError):
        load_or_build_index(tmp_path, "v1", broken)
    assert list(tmp_path.iterdir()) == []


def test_a_directory_without_meta_is_not_loaded(tmp_path: Path) -> None:
    (tmp_path / "index-v1").mkdir()  # e.g. a copy interrupted by hand
    from clinseek.knowledge import KnowledgeDocument

    index = load_or_build_index(tmp_path, "v1", lambda: [KnowledgeDocument("clinseek-kb://a/b", "t", "potassium", "a")])
    assert isinstance(index, KnowledgeIndex) and len(index) == 1


def test_folder_documents_are_indexed_and_bad_files_are_reported(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "hypokalemia.md").write_text("# Hypokalemia protocol\nGive KCl 20 mEq when below 3.5.\n")
    (folder / "sub" / "page.html").write_text(
        "<html><head><title>Wards</title><style>x{}</style></head><body><p>Ward 7 handles telemetry.</p></body></html>"
    )
    (folder / "notes.txt").write_text("Vancomycin trough goal 15-20.\n")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    (folder / "bad.txt").write_bytes(b"\xff\xfe\xfa not utf-8")
    (folder / "ignored.bin").write_bytes(b"\0")
    knowledge = open_knowledge(KnowledgeConfig(bundled=False, folders=(folder,), cache_dir=tmp_path / "cache"))
    assert _top3(knowledge, "hypokalemia protocol")[0].endswith("hypokalemia.md")
    assert _top3(knowledge, "telemetry ward")[0].endswith("sub/page.html")
    assert knowledge.fetch(_top3(knowledge, "telemetry ward")[0]).title == "Wards"
    assert _top3(knowledge, "vancomycin trough")[0].endswith("notes.txt")
    problems = knowledge.describe()["corpus_problems"]
    assert any("broken.pdf" in p for p in problems) and any("bad.txt" in p for p in problems)


def _tiny_pdf(text: str) -> bytes:
    """A one-page PDF that shows ``text`` in Helvetica (written by hand: no PDF writer needed)."""
    content = f"BT /F1 18 Tf 20 100 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 144] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


def test_a_pdf_in_a_folder_is_read(tmp_path: Path) -> None:
    pytest.importorskip("pypdf")
    (tmp_path / "dialysis.pdf").write_bytes(_tiny_pdf("Hyperkalemia dialysis protocol"))
    (tmp_path / "other.md").write_text("# Other\nnothing here\n")
    knowledge = open_knowledge(KnowledgeConfig(bundled=False, folders=(tmp_path,)))
    assert knowledge.describe()["corpus_problems"] == []
    (hit,), _ = knowledge.search("dialysis", 3)
    assert hit.url.endswith("dialysis.pdf") and "Hyperkalemia dialysis protocol" in knowledge.fetch(hit.url).text


def test_a_changed_folder_changes_the_corpus_version(tmp_path: Path) -> None:
    from clinseek.knowledge import CorpusSpec, corpus_version

    (tmp_path / "a.md").write_text("one")
    spec = CorpusSpec(bundled=False, folders=(tmp_path,))
    before = corpus_version(spec)
    (tmp_path / "b.md").write_text("two")
    assert corpus_version(spec) != before


def test_store_derived_documents_hold_no_patient_identifier(demo_store: Path) -> None:
    from clinseek.knowledge._item_docs import item_documents
    from clinseek.store import open_store

    store = open_store(demo_store)
    con = store.connect()
    try:
        ids = {str(r[0]) for r in con.execute("SELECT subject_id FROM hosp.patients").fetchall()}
        ids |= {str(r[0]) for r in con.execute("SELECT hadm_id FROM hosp.admissions").fetchall()}
    finally:
        con.close()
    docs = list(item_documents(store))
    assert len(docs) > 1_000
    seen = {word for d in docs for word in (d.title + " " + d.text).replace(",", " ").replace(")", " ").split()}
    assert not ids & seen  # dictionaries and reference ranges only: never a patient's row


def test_a_reference_range_needs_several_patients() -> None:
    import duckdb

    from clinseek.knowledge._item_docs import MIN_RANGE_PATIENTS, reference_ranges

    con = duckdb.connect()
    con.execute("CREATE SCHEMA hosp")
    con.execute(
        "CREATE TABLE hosp.labevents (subject_id INTEGER, itemid INTEGER, "
        "ref_range_lower DOUBLE, ref_range_upper DOUBLE)"
    )
    rows = [(s, 1, 3.5, 5.0) for s in range(MIN_RANGE_PATIENTS)]  # shared by enough patients
    rows += [(99, 1, 1.0, 2.0)] * 50  # one patient's many rows do not make it the range
    rows += [(98, 2, 7.0, 9.0)] * 20  # an item only one patient has: no range at all
    con.executemany("INSERT INTO hosp.labevents VALUES (?, ?, ?, ?)", rows)
    assert reference_ranges(con) == {1: (3.5, 5.0)}


def test_offline_search_says_what_the_index_holds(full_knowledge: Knowledge) -> None:
    """A question the index cannot answer well (treatment) gets loosely matching codes: the page says
    what the index covers so the model does not take them for guidance."""
    from clinseek.tools import PageBrowser

    page = PageBrowser(full_knowledge).search("hyponatremia treatment", 5).content
    assert "Offline index: ICD-10-CM, ICD-9-CM" in page and "lab tests (units, reference ranges)" in page
    assert "not treatment guidelines, drug dosing or textbook knowledge" in page


def test_the_coverage_line_names_only_the_sources_present() -> None:
    from clinseek.knowledge import offline_coverage

    line = offline_coverage(["labs", "folder:guidelines", "labs"])
    assert line.startswith("Offline index: lab tests (units, reference ranges), your documents (guidelines).")
    assert "ICD" not in line and line.endswith("beyond your documents.")
