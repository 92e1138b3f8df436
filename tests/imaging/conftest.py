"""Fixtures for the imaging tests: real chest films (pydicom-data RG1, the NIH ChestX-ray14 PNGs), synthetic
DICOMs written with pydicom, and multimodal episodes of the synthetic store with their linked images."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def rg1() -> Path:
    """pydicom-data's RG1_UNCR.dcm: a real PA chest radiograph (CR, MONOCHROME1, 1955x1841)."""
    from pydicom.data import get_testdata_file

    path = get_testdata_file("RG1_UNCR.dcm")
    if path is None:
        pytest.skip("pydicom-data is not installed")
    return Path(path)


@pytest.fixture(scope="session")
def nih_pngs(shared_data: Path) -> list[Path]:
    """The 7 public NIH ChestX-ray14 films (1024x1024 8-bit PNG, CC0)."""
    found = sorted((shared_data / "cxr" / "nih-chestxray14" / "images").glob("*.png"))
    if not found:
        pytest.skip("NIH ChestX-ray14 sample films not found")
    return found


@dataclass(frozen=True)
class MMCase:
    """A multimodal question of the synthetic store: its key, images root and one later, unlinked study."""

    store: Path
    cxr_root: Path
    subject_id: int
    prediction_time: dt.datetime
    study_id: int
    dicom_ids: tuple[str, ...]
    later_study: tuple[int, str] | None
    other_subject: tuple[int, int, str]


@pytest.fixture(scope="session")
def mm_case(synthetic_store: Path) -> MMCase:
    """A patient with two or more CXR studies: the question links the first, at its study time."""
    from clinseek.imaging import store_cxr_root
    from clinseek.schema import STUDY_TIME_SQL
    from clinseek.store import open_store

    root = store_cxr_root(synthetic_store)
    assert root is not None
    sql = (f"SELECT subject_id, study_id, min({STUDY_TIME_SQL}) AS t, list(dicom_id ORDER BY dicom_id) "
           "FROM cxr.metadata t GROUP BY subject_id, study_id ORDER BY subject_id, t")
    with open_store(synthetic_store).connect() as con:
        rows = con.execute(sql).fetchall()
    by_subject: dict[int, list[tuple[int, dt.datetime, list[str]]]] = {}
    for sid, study, t, dicoms in rows:
        by_subject.setdefault(sid, []).append((study, t, dicoms))
    subject, studies = next((s, v) for s, v in by_subject.items() if len(v) >= 2)
    other = next(s for s in by_subject if s != subject)
    first, later = studies[0], studies[1]
    return MMCase(synthetic_store, root, subject, first[1], first[0], tuple(first[2]), (later[0], later[2][0]),
                  (other, by_subject[other][0][0], by_subject[other][0][2][0]))


@pytest.fixture()
def mm_ctx(mm_case: MMCase, tmp_path: Path) -> Iterator[object]:
    """A tool context on the multimodal episode of ``mm_case`` with its imaging session attached."""
    from clinseek.episode import MM_POLICY, EpisodeKey, build_episode
    from clinseek.imaging import CxrLocator
    from clinseek.tools import ToolContext, attach_imaging

    key = EpisodeKey(mm_case.subject_id, mm_case.prediction_time, MM_POLICY, study_ids=(mm_case.study_id,),
                     dicom_ids=mm_case.dicom_ids)
    episode = build_episode(mm_case.store, key)
    ctx = ToolContext(episode=episode)
    attach_imaging(ctx, CxrLocator((mm_case.cxr_root,)), artifact_dir=tmp_path / "artifacts")
    yield ctx
    episode.close()
