"""A result row as the viewer shows it: steps joined with call and tool records; shared texts; images."""

from __future__ import annotations

import base64
import io
from pathlib import Path

from _report_helpers import result_row
from PIL import Image

from clinseek.reporting import THUMBNAIL_PX, ImageTable, SharedTexts, row_payload, trajectory_steps


def test_steps_follow_the_messages_with_call_and_tool_accounting() -> None:
    row = result_row("q1", "agent", "m", gold=["yes"], answer=["yes"], output="x" * 50)
    steps = trajectory_steps(row, SharedTexts(), ImageTable())
    assert [s["kind"] for s in steps] == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant", "tool"]
    first = steps[2]
    assert (first["turn"], first["latency_s"], first["input_tokens"], first["output_tokens"]) == (1, 0.5, 100, 10)
    assert first["reasoning"] == "Load the record first."
    assert first["calls"] == [{"id": "c1", "name": "ehr.load_ehr", "args": {"subject_id": 1, "timestamp": "2150-01-01"}}]
    sql = steps[5]
    assert (sql["name"], sql["elapsed_s"], sql["output_chars"], sql["truncated"]) == ("ehr.run_sql_query", 0.25, 50, True)
    assert steps[6]["turn"] == 3


def test_system_prompts_are_stored_once() -> None:
    texts = SharedTexts()
    a = trajectory_steps(result_row("q1", "agent", "m", gold=["yes"], answer=["yes"]), texts, ImageTable())
    b = trajectory_steps(result_row("q2", "agent", "m", gold=["no"], answer=["no"]), texts, ImageTable())
    assert a[0]["ref"] == b[0]["ref"] and len(texts.texts) == 1


def test_images_are_embedded_once_as_thumbnails(cxr_png: Path) -> None:
    images = ImageTable()
    for qid in ("q1", "q2"):
        trajectory_steps(result_row(qid, "agent", "m", gold=["yes"], answer=["yes"], image=cxr_png), SharedTexts(), images)
    (entry,) = images.entries.values()
    assert entry["path"] == str(cxr_png) and entry["uri"].startswith("data:image/jpeg;base64,")


def test_thumbnails_are_shrunk(cxr_png: Path) -> None:
    table = ImageTable()
    table.ref(str(cxr_png))
    data = base64.b64decode(table.entries["i0"]["uri"].split(",", 1)[1])
    with Image.open(io.BytesIO(data)) as image:
        assert max(image.size) == THUMBNAIL_PX


def test_relative_image_paths_resolve_under_the_roots(cxr_png: Path) -> None:
    table = ImageTable(roots=[cxr_png.parent.parent])
    key = table.ref(f"{cxr_png.parent.name}/{cxr_png.name}")
    assert "uri" in table.entries[key]


def test_a_missing_or_unreadable_image_is_an_error_entry(tmp_path: Path) -> None:
    table = ImageTable()
    missing = table.ref(str(tmp_path / "absent.png"))
    (tmp_path / "bad.png").write_text("not an image")
    bad = table.ref(str(tmp_path / "bad.png"))
    assert table.entries[missing] == {"path": str(tmp_path / "absent.png"), "error": "file not found"}
    assert "not an image" in table.entries[bad]["error"]


def test_payload_keeps_answer_gold_status_and_usage_but_no_credentials() -> None:
    row = result_row("q10", "agent", "m", gold=["no"], answer=None, status="infra_error")
    payload = row_payload(row, SharedTexts(), ImageTable())
    assert (payload["status"], payload["error"], payload["gold"], payload["answer"]) == ("infra_error", "boom", ["no"], None)
    assert (payload["input_tokens"], payload["output_tokens"], payload["cost_usd"]) == (600, 60, 0.01)
