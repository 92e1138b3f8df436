"""Leakage audit, CXR: no unlinked or later study, image or report is reachable from an episode or its tools."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from clinseek.episode import MM_POLICY, EpisodeKey, build_episode
from clinseek.imaging import CxrLocator
from clinseek.tools import ToolContext, attach_imaging, call_tool


def _call(ctx: ToolContext, name: str, **arguments: object):
    return anyio.run(lambda: call_tool(ctx, name, arguments))


def _studies(ctx: ToolContext, table: str) -> set[int]:
    if not ctx.episode.has_table(table):
        return set()
    return {r[0] for r in ctx.episode.execute(f"SELECT DISTINCT study_id FROM {table}").rows}


def test_episode_holds_only_the_linked_study_and_no_label_source(mm_ctx, mm_case) -> None:
    assert _studies(mm_ctx, "cxr.metadata") == {mm_case.study_id}
    assert _studies(mm_ctx, "cxr.reports") == {mm_case.study_id}
    for label_source in ("cxr.chexpert", "cxr.negbio", "cxr.split"):
        assert not mm_ctx.episode.has_table(label_source)
    assert [i.study_id for i in mm_ctx.state["imaging"].images] == [mm_case.study_id] * len(mm_case.dicom_ids)


def test_a_linked_study_after_the_cutoff_does_not_exist(mm_case, tmp_path: Path) -> None:
    later_study, later_dicom = mm_case.later_study
    key = EpisodeKey(mm_case.subject_id, mm_case.prediction_time, MM_POLICY,
                     study_ids=(mm_case.study_id, later_study), dicom_ids=(*mm_case.dicom_ids, later_dicom))
    with build_episode(mm_case.store, key) as episode:
        ctx = ToolContext(episode=episode)
        session = attach_imaging(ctx, CxrLocator((mm_case.cxr_root,)), artifact_dir=tmp_path)
        assert _studies(ctx, "cxr.metadata") == {mm_case.study_id}
        assert _studies(ctx, "cxr.reports") == {mm_case.study_id}
        assert later_dicom not in {i.dicom_id for i in session.images}
        result = _call(ctx, "image.dicom_processor", dicom_path=later_dicom)
    assert result.error_kind == "not_linked"


@pytest.mark.parametrize("which", ["later_by_id", "later_by_path", "other_patient", "system_file", "traversal"])
def test_tools_refuse_every_image_but_the_linked_ones(mm_ctx, mm_case, which: str) -> None:
    later_study, later_dicom = mm_case.later_study
    other_sid, other_study, other_dicom = mm_case.other_subject
    locator = CxrLocator((mm_case.cxr_root,))
    arg = {
        "later_by_id": later_dicom,
        "later_by_path": str(locator.image(mm_case.subject_id, later_study, later_dicom)),  # the file exists
        "other_patient": str(locator.image(other_sid, other_study, other_dicom)),
        "system_file": "/etc/passwd",
        "traversal": str(mm_case.cxr_root / "files" / ".." / "files"),
    }[which]
    for name in ("image.dicom_processor", "image.image_visualizer"):
        key = "dicom_path" if name == "image.dicom_processor" else "image_path"
        result = _call(mm_ctx, name, **{key: arg})
        assert result.error_kind == "not_linked", (name, result.content)
        assert mm_case.dicom_ids[0] in result.content  # says which images it may open


def test_hidden_reports_leave_no_report_text_in_the_episode(mm_case, tmp_path: Path) -> None:
    key = EpisodeKey(mm_case.subject_id, mm_case.prediction_time, MM_POLICY, study_ids=(mm_case.study_id,),
                     dicom_ids=mm_case.dicom_ids, hide_cxr_reports=True)
    with build_episode(mm_case.store, key) as episode:
        ctx = ToolContext(episode=episode)
        session = attach_imaging(ctx, CxrLocator((mm_case.cxr_root,)), artifact_dir=tmp_path)
        assert not episode.has_table("cxr.reports") and session.reports == ()
        assert session.images  # the images stay
        # nor through the radiology notes: the linked study's note is signed after the study time
        from clinseek.store import open_store

        with open_store(mm_case.store).connect() as con:
            (text,) = con.execute("SELECT text FROM cxr.reports WHERE study_id = ?", [mm_case.study_id]).fetchall()[0]
        if episode.has_table("note.radiology"):
            notes = [r[0] for r in episode.execute("SELECT text FROM note.radiology", max_rows=10_000).rows]
            assert text not in notes
