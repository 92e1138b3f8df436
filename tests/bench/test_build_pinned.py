"""Every task of every benchmark builds exactly the manifests it built before the task registry was consolidated.

The expected digests were computed from main before ``clinseek.bench`` read its tasks from one registry
(issue #21): the same store (the synthetic session store, 40 patients, seed 7), the same seed and
per-task count. Each task's rows, its candidate file and the build manifest (less its time, version and
path) are hashed separately, so a failure names the task that changed. A deliberate change to a task's
definition updates its digest here, in the same commit.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from clinseek.bench import AGENTEHR_FILE, MM_FILE, TEXT_FILE, build_benchmark

SEED = 11
PER_TASK = 3


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def _by_task(rows: list[dict[str, Any]], key: str = "task") -> dict[str, str]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(str(row[key]), []).append(row)
    return {name: _digest(group) for name, group in sorted(groups.items())}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _manifest(out: Path) -> str:
    manifest = json.loads((out / "build_manifest.json").read_text(encoding="utf-8"))
    for varying in ("created_at", "clinseek_version", "store", "store_info"):
        manifest.pop(varying)
    return _digest(manifest)


def _digests(out: Path) -> dict[str, Any]:
    found: dict[str, Any] = {"build_manifest": _manifest(out)}
    if (out / TEXT_FILE).is_file():
        found["text"] = _by_task(json.loads((out / TEXT_FILE).read_text(encoding="utf-8")))
    if (out / MM_FILE).is_file():
        found["multimodal"] = _by_task(_jsonl(out / MM_FILE), key="category")
    if (out / AGENTEHR_FILE).is_file():
        found["agentehr"] = _by_task(_jsonl(out / AGENTEHR_FILE))
    if (out / "candidates").is_dir():
        found["candidates"] = {p.stem: _digest(json.loads(p.read_text(encoding="utf-8")))
                               for p in sorted((out / "candidates").glob("*.json"))}
    return found


@pytest.fixture(scope="module")
def built(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    root = tmp_path_factory.mktemp("pinned")
    out: dict[str, dict[str, Any]] = {}
    for benchmark in ("clinseek", "agentehr"):
        build_benchmark(synthetic_store, per_task=PER_TASK, seed=SEED, out=root / benchmark,
                        benchmark=benchmark)  # type: ignore[arg-type]
        out[benchmark] = _digests(root / benchmark)
    return out


EXPECTED: dict[str, dict[str, Any]] = {"agentehr": {"agentehr": {"diagnoses_ccs": "4ea69c98563b9b6b",
                           "labevents": "108313b023d9b301",
                           "microbiologyevents": "9b6c644f5d38df3e",
                           "prescriptions": "802fd9d6d1433698",
                           "procedures_ccs": "10eecee644956373",
                           "transfers": "dacf9bca74e6e3f9"},
              "build_manifest": "ec2c64abd8bb961c"},
 "clinseek": {"build_manifest": "dcefd6e52530a0df",
              "candidates": {"admissions": "51c65713e15d986c",
                             "chartevents": "66bfcf1a448125b1",
                             "datetimeevents": "ad9fc130cfa24559",
                             "diagnoses_ccs": "bb54bf4a26316f46",
                             "diagnoses_icd": "0c5fa1f263afbc6b",
                             "diagnosis": "e36f0cb65b4ea419",
                             "diagnosis_ccs": "bb54bf4a26316f46",
                             "emar": "8aa35f1ae4879f6b",
                             "ingredientevents": "aa1944dda3f8da00",
                             "inputevents": "3815dea4809a23eb",
                             "labevents": "4ffd14d2c9d57540",
                             "medrecon": "f5d50570260c5e09",
                             "microbiologyevents": "3351c6c0d43d2f0d",
                             "next_event": "abe596d87753b4e7",
                             "omr": "933991cff5052c7b",
                             "outputevents": "94d0e7d1d04292a9",
                             "poe": "8c944a93f3edbffe",
                             "prescriptions": "8aa35f1ae4879f6b",
                             "procedureevents": "4485c6a6b0589772",
                             "procedures_ccs": "64b6d8bef5929821",
                             "procedures_icd": "5780108a43d22201",
                             "pyxis": "c8b31cc26fa375f8",
                             "radiology": "3dd882fbc4cc45d8",
                             "services": "7b7b2f282400a66a",
                             "transfers": "aa9b0ff54d1928ff"},
              "multimodal": {"CXR change comparison": "fa2e20f7b90dd564",
                             "CXR finding enumeration": "d380a314f83dccce",
                             "CXR finding presence": "909dad24e6a64917",
                             "Clinical deterioration": "2b30decc751cef96",
                             "Mortality": "df4c74266302275a",
                             "Phenotype": "5faa831eca8d5718"},
              "text": {"ED_Critical_Outcomes": "4f3b31bbd28156f8",
                       "ED_Hospitalization": "da8ff85e26f1ac36",
                       "ED_ICU_Tranfer_12hour": "8276ef694bf37005",
                       "ED_Inpatient_Mortality": "08d267f58f9bf24e",
                       "ED_Reattendance_3day": "78f2f91f07e71c1a",
                       "ICU_Mortality_14day": "450fff3ee4f0308c",
                       "ICU_Mortality_1day": "ce1b55b072ef2b2b",
                       "ICU_Mortality_2day": "fcaf40fabbacea8c",
                       "ICU_Mortality_3day": "5185a7dd2f9b66df",
                       "ICU_Mortality_7day": "6d9d2bf89082779f",
                       "ICU_Readmission": "c8e999ca98080d52",
                       "ICU_Stay_14day": "18af68ea6d6d3142",
                       "ICU_Stay_7day": "2bb72661fd381267",
                       "Inpatient_Mortality": "74ad3f49a444f403",
                       "LengthOfStay_3day": "93f3ccff769b3cbd",
                       "LengthOfStay_7day": "987bf25c249a512c",
                       "Readmission_30day": "cd304d5b3d93b174",
                       "Readmission_60day": "639ddfe6358d9e30",
                       "admissions": "dd621c809e60f601",
                       "chartevents": "620ee0e5295a30a9",
                       "datetimeevents": "4db5a5495c6c15ed",
                       "diagnoses_ccs": "ed9220c89a528261",
                       "diagnoses_icd": "484d14b3ee12adc6",
                       "diagnosis": "cbcea4a118152aef",
                       "diagnosis_ccs": "fae13e69e96de7a5",
                       "emar": "4138101c82d077db",
                       "ingredientevents": "4f4271c6773ea912",
                       "inputevents": "eb2518b56d781571",
                       "labevents": "a0c3bc84efc0109f",
                       "medrecon": "3213bd75b98e9ec3",
                       "microbiologyevents": "efad9959f34ee7f0",
                       "next_event": "36873e33d3929d35",
                       "omr": "315ea40217bb74a5",
                       "outputevents": "5bdd3ea5fec6a8b1",
                       "poe": "e2ffed1ac1e86e03",
                       "prescriptions": "397686d8c60d679f",
                       "procedureevents": "c978d0e5a94b7923",
                       "procedures_ccs": "fb5ea7628e22dc56",
                       "procedures_icd": "dbfd77da255cba3d",
                       "pyxis": "b26886584eecf376",
                       "radiology": "15799c73452c4011",
                       "services": "da921aba958f437a",
                       "transfers": "790f9267c039cb6f"}}}


@pytest.mark.parametrize("benchmark", ["clinseek", "agentehr"])
def test_every_task_builds_the_pinned_manifest(built: dict[str, dict[str, Any]], benchmark: str) -> None:
    assert built[benchmark] == EXPECTED[benchmark]
