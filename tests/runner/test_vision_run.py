"""Multimodal runs with a model that does not take images (``RunSettings.vision=False`` / ``--no-vision``):
nothing is attached, the run context and tool turns say what was not shown, rows and manifest record it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import pytest

from clinseek.imaging import store_cxr_root
from clinseek.models import GenerateConfig, Message, ModelResponse, ToolCall, Usage
from clinseek.runner import ModelSettings, RunOptions, RunSettings, Sources, read_results, run_benchmark


class _LooksAtTheFilm:
    """Calls ``image.dicom_processor`` on the first listed image, then finishes."""

    supports_native_tools = True
    supports_vision = True  # declared; the run's override turns it off

    name = "scripted:film"

    async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                       config: GenerateConfig | None = None) -> ModelResponse:
        if not any(m.role == "tool" for m in messages):
            dicom_id = re.search(r"^- (\S+): ", messages[1].content, re.MULTILINE)
            assert dicom_id is not None, messages[1].content
            call = ToolCall(id="d", name="image.dicom_processor", arguments={"dicom_path": dicom_id.group(1)})
        else:
            call = ToolCall(id="f", name="ehr.finish", arguments={"response": ["no"]})
        return ModelResponse(model=self.name, message=Message(role="assistant", content="", tool_calls=[call]),
                             usage=Usage(input_tokens=1, output_tokens=1), cost_usd=Decimal(0), latency_s=0.0,
                             stop_reason="tool_calls")

    async def aclose(self) -> None:
        pass


@pytest.fixture(scope="module")
def mm_question(synthetic_bench):
    _, questions = synthetic_bench
    return [q for q in questions if q.task_type == "multimodal"][:1]


def _run(questions, store: Path, out: Path, mode: str, model) -> Path:
    settings = RunSettings(model=ModelSettings(vision=False), run=RunOptions(concurrency=1), sources=Sources(cxr_root=store_cxr_root(store)))
    summary = anyio.run(lambda: run_benchmark(questions, store, mode, model, out, settings=settings))  # type: ignore[arg-type]
    return Path(summary.runs[0].out_dir)


def test_agent_run_without_vision_sends_no_image_and_says_so(mm_question, synthetic_store: Path, tmp_path: Path) -> None:
    out_dir = _run(mm_question, synthetic_store, tmp_path, "agent", _LooksAtTheFilm())
    (row,) = read_results(out_dir / "results.jsonl").rows
    assert row.status != "infra_error", row.error
    assert all(not m.get("images") for m in row.messages)
    task = row.messages[1]["content"]
    assert "images_attached: 0" in task and "available through the image.* tools" in task
    tool_turn = next(m for m in row.messages if m["role"] == "tool")
    assert "1 picture(s) made by this tool not shown" in tool_turn["content"]
    listed = len(re.findall(r"^- \S+: ", task, re.MULTILINE))
    assert listed >= 1
    assert row.images_sent == 0 and row.images_not_sent == listed + 1
    assert json.loads((out_dir / "run_manifest.json").read_text())["vision"] is False


def test_curated_run_without_vision_notes_the_images(mm_question, synthetic_store: Path, tmp_path: Path) -> None:
    out_dir = _run(mm_question, synthetic_store, tmp_path, "curated", "baseline:evidence")
    (row,) = read_results(out_dir / "results.jsonl").rows
    assert row.images_not_sent >= 1 and row.images_sent == 0
    assert "linked image(s) not shown" in row.messages[1]["content"] and not row.messages[1].get("images")
