"""Linked CXR images travel by reference (a path), never as base64, in requests and in results."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from PIL import Image

from clinseek.models import Message, ModelResponse, Usage
from clinseek.runner import RunOptions, RunSettings, Sources, read_results, run_benchmark


class Recorder:
    name, supports_native_tools = "fake:recorder", True

    def __init__(self) -> None:
        self.seen: list[Message] = []

    async def generate(self, messages, tools=(), config=None) -> ModelResponse:
        self.seen = list(messages)
        reply = Message(role="assistant", content="<answer>\nyes\n</answer>")
        return ModelResponse(model=self.name, message=reply, usage=Usage(), latency_s=0.0, stop_reason="end_turn")

    async def aclose(self) -> None: ...


def test_images_are_attached_by_path(synthetic_bench, synthetic_store: Path, tmp_path: Path) -> None:
    _, questions = synthetic_bench
    question = next(q for q in questions if q.task_type == "multimodal" and q.image_paths)
    root = tmp_path / "cxr"
    image = root / question.image_paths[0]
    image.parent.mkdir(parents=True)
    Image.new("L", (8, 8)).save(image, format="PNG")
    model = Recorder()
    settings = RunSettings(run=RunOptions(concurrency=1), sources=Sources(cxr_root=root))
    summary = anyio.run(lambda: run_benchmark([question], synthetic_store, "curated", model, tmp_path / "out",
                                              settings=settings))
    assert [i.path for i in model.seen[1].images] == [str(image)]
    row = read_results(Path(summary.runs[0].out_dir) / "results.jsonl").rows[0]
    assert row.messages[1]["images"] == [{"path": str(image)}]
    assert "base64" not in json.dumps(row.messages) and row.answer == ["yes"]


def test_null_baseline_says_no_to_a_multimodal_yes_no_question(synthetic_runs) -> None:
    out, questions, _ = synthetic_runs
    rows = read_results(out / "clinseek-bench-mm" / "agent" / "baseline_null" / "results.jsonl").rows
    asks = {q.qid for q in questions if q.question_text and "yes or no" in q.question_text.lower()}
    assert asks and all(r.answer == ["no"] for r in rows if r.qid in asks)
