"""The vision flag: models declare ``supports_vision``; images go only to models that take them, and
otherwise the prompt says how many were not shown and the outcome counts them (never a silent drop)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from _agent_helpers import ScriptedModel, assistant, call
from PIL import Image

from clinseek.agent import images_note, run_agent, run_curated
from clinseek.models import ImageRef, TextProtocolModel, accepts_images, get_model, vision_capable


class _TextOnly(ScriptedModel):
    supports_vision = False


class _Vision(ScriptedModel):
    supports_vision = True


@pytest.fixture
def images(tmp_path: Path) -> list[ImageRef]:
    refs = []
    for i in range(2):
        path = tmp_path / f"cxr{i}.png"
        Image.new("L", (8, 8), color=40 * i).save(path)
        refs.append(ImageRef(path=str(path)))
    return refs


@pytest.mark.parametrize(("model_id", "takes"), [
    ("claude-opus-4-6", True), ("us.anthropic.claude-opus-4-6-v1", True), ("claude-2.1", False),
    ("gpt-5.1", True), ("gpt-4o-mini", True), ("gpt-3.5-turbo", False), ("o3-mini", False),
    ("Qwen/Qwen2.5-VL-7B-Instruct", True), ("openai/gpt-oss-120b", False), ("MiniMax-M2.5", False),
    ("some-unknown-model", False),
])
def test_vision_table(model_id: str, takes: bool) -> None:
    assert vision_capable(model_id) is takes


def test_providers_declare_the_flag_and_wrappers_keep_it(api_keys: str) -> None:
    assert get_model("openai:gpt-4o", base_url="http://127.0.0.1:9/v1").supports_vision is True
    assert get_model("openai:Meta-Llama-3-8B", base_url="http://127.0.0.1:9/v1").supports_vision is False
    assert get_model("anthropic:claude-sonnet-4-5").supports_vision is True
    text = get_model("openai:gpt-4o", base_url="http://127.0.0.1:9/v1", tool_protocol="text")
    assert isinstance(text, TextProtocolModel) and text.supports_vision is True
    assert get_model("baseline:evidence").supports_vision is True  # accepts images, ignores them
    assert accepts_images(object()) is True  # a model that declares nothing keeps the old behaviour


def _finish() -> list:
    return [assistant(call("ehr.finish", response=["no"]))]


def test_agent_sends_images_only_to_a_vision_model(demo_ctx, demo_question, images: list[ImageRef]) -> None:
    model = _Vision(_finish())
    outcome = anyio.run(lambda: run_agent(model, demo_ctx, demo_question, images=images))
    task_turn = model.requests[0][0][1]
    assert [i.path for i in task_turn.images] == [i.path for i in images]
    assert (outcome.images_sent, outcome.images_not_sent) == (2, 0)


def test_agent_replaces_images_by_a_note_for_a_text_model(demo_ctx, demo_question, images: list[ImageRef]) -> None:
    model = _TextOnly(_finish())
    outcome = anyio.run(lambda: run_agent(model, demo_ctx, demo_question, images=images))
    task_turn = model.requests[0][0][1]
    assert task_turn.images == []
    assert images_note(2, imaging_tools=False) in task_turn.content
    assert outcome.status == "answered" and (outcome.images_sent, outcome.images_not_sent) == (0, 2)


def test_override_wins_over_the_declared_flag(demo_ctx, demo_question, images: list[ImageRef]) -> None:
    model = _Vision(_finish())
    outcome = anyio.run(lambda: run_agent(model, demo_ctx, demo_question, images=images, vision=False))
    assert model.requests[0][0][1].images == [] and outcome.images_not_sent == 2


def test_curated_mode_notes_images_a_text_model_cannot_see(demo_question, images: list[ImageRef]) -> None:
    from clinseek.models import Message

    reply = Message(role="assistant", content="<answer>\nno\n</answer>")
    text_model, vision_model = _TextOnly([reply]), _Vision([reply])
    blind = anyio.run(lambda: run_curated(text_model, demo_question, "## package", images=images))
    seen = anyio.run(lambda: run_curated(vision_model, demo_question, "## package", images=images))
    blind_turn, seen_turn = text_model.requests[0][0][1], vision_model.requests[0][0][1]
    assert blind_turn.images == [] and "2 linked image(s) not shown" in blind_turn.content
    assert len(seen_turn.images) == 2 and "not shown" not in seen_turn.content
    assert (blind.images_not_sent, seen.images_sent) == (2, 2)
