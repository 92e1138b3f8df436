"""Each supported template family: exported samples render with the family's template (written in the test),
the loss mask covers exactly the assistant turns, and every rendered call round-trips through its parser."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from _distill_helpers import build_family_tokenizer

from clinseek.distill import (
    TEMPLATE_FAMILIES,
    ExportFilters,
    Sample,
    export_dataset,
    get_family,
    load_tokenizer,
    parse_tool_calls,
    read_samples,
    render_dataset,
    render_sample,
    round_trip,
)
from clinseek.errors import ClinseekError


@pytest.fixture(autouse=True, scope="module")
def _distill_extra() -> None:
    """transformers are imported when these tests run, not when they are collected."""
    pytest.importorskip("transformers", reason="the [distill] extra (transformers) is not installed")


FAMILIES = ["qwen3", "qwen3.5", "llama3", "gemma4"]
END_OF_TURN = {"qwen3": "<|im_end|>", "qwen3.5": "<|im_end|>", "llama3": "<|eot_id|>", "gemma4": "<turn|>"}


@pytest.fixture(scope="module")
def dataset(distill_runs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_dataset([distill_runs], tmp_path_factory.mktemp("fam") / "ds", ExportFilters(include_baselines=True, min_f1=0.0)).out


@pytest.fixture(scope="module")
def samples(dataset: Path) -> list[Sample]:
    return read_samples(dataset)


@pytest.fixture(scope="module", params=FAMILIES)
def family(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    name = str(request.param)
    return name, build_family_tokenizer(tmp_path_factory.mktemp(f"tok_{name}"), name)


def _single_call(samples: list[Sample]) -> Sample:
    """The longest sample whose assistant turns make one call each (Llama 3's template allows no more)."""
    ok = [s for s in samples if all(len(m.get("tool_calls") or []) == 1 for m in s.messages if m["role"] == "assistant")]
    return max(ok, key=lambda s: s.n_assistant_turns)


def test_families_cover_the_models_users_distil_into() -> None:
    assert set(TEMPLATE_FAMILIES) == set(FAMILIES)
    assert {get_family(f).tool_parser for f in FAMILIES} == {"hermes", "qwen3_xml", "llama3_json", "gemma4"}
    with pytest.raises(ClinseekError, match="unknown template family 'mistral'"):
        get_family("mistral")


def test_rendered_sample_round_trips_through_the_family_parser(family: tuple[str, Path], samples: list[Sample]) -> None:
    name, folder = family
    spec = get_family(name)
    tok = load_tokenizer(folder)
    sample = _single_call(samples)
    rendered = render_sample(tok, sample.messages, sample.tools, spec.template_kwargs)
    assert round_trip(rendered, sample.messages, spec.tool_parser) == []
    calls = [c for m in sample.messages if m["role"] == "assistant" for c in m["tool_calls"]]
    parsed = [p for _, text in rendered.assistant_text for p in parse_tool_calls(text, spec.tool_parser)]
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        (n, {k: v for k, v in a.items()}) for n, a in parsed] or spec.tool_parser == "qwen3_xml"
    trained = tok.decode([t for t, keep in zip(rendered.input_ids, rendered.loss_mask, strict=True) if keep],
                         skip_special_tokens=False)
    assert trained.count(END_OF_TURN[name]) == sample.n_assistant_turns  # each turn ends where the model stops
    masked = tok.decode([t for t, keep in zip(rendered.input_ids, rendered.loss_mask, strict=True) if not keep],
                        skip_special_tokens=False)
    for message in sample.messages:
        if message["role"] == "tool":
            shown = message["content"].strip()[:40], json.dumps(message["content"].strip())[1:41]  # Llama quotes it
            assert not any(s in trained for s in shown)  # tool results are context, never learned
            assert any(s in masked for s in shown)


def test_auto_detects_each_family(family: tuple[str, Path], samples: list[Sample]) -> None:
    name, folder = family
    spec = get_family(name)
    sample = _single_call(samples)
    rendered = render_sample(load_tokenizer(folder), sample.messages, sample.tools, spec.template_kwargs)
    assert round_trip(rendered, sample.messages, "auto") == []


def test_render_dataset_with_a_family_records_it(family: tuple[str, Path], dataset: Path, tmp_path: Path) -> None:
    name, folder = family
    report = render_dataset(dataset, folder, tmp_path / "r", family=name)
    assert report.family == name and report.tool_parser == get_family(name).tool_parser
    assert report.template_kwargs == dict(get_family(name).template_kwargs)
    assert report.rendered >= 1 and not report.round_trip_failures
    if name == "llama3":  # turns with parallel calls cannot be rendered: listed, never written
        assert all("single tool-calls" in p.problems[0] for p in report.mask_failures)
    else:
        assert report.rendered == report.samples_in and not report.mask_failures
    table = pq.read_table(tmp_path / "r" / "train.parquet")
    assert table.num_rows == report.rendered


def test_gemma4_without_thinking_is_a_mask_failure_not_a_silent_mask(samples: list[Sample], tmp_path: Path) -> None:
    """Thinking off, Gemma 4's generation prompt adds an empty thought channel past model turns lack."""
    tok = load_tokenizer(build_family_tokenizer(tmp_path / "g", "gemma4"))
    sample = _single_call(samples)
    with pytest.raises(ValueError, match="generation prompt"):
        render_sample(tok, sample.messages, sample.tools, {"enable_thinking": False})
