"""Rendering with tiny tokenizers built here: assistant-only loss mask, tool-call round trip, no cutting."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from _distill_helpers import HERMES_TEMPLATE, LOSSY_TEMPLATE, build_tokenizer

from clinseek.distill import (
    ExportFilters,
    export_dataset,
    load_tokenizer,
    read_samples,
    render_dataset,
    render_sample,
)
from clinseek.errors import ClinseekError


@pytest.fixture(autouse=True, scope="module")
def _distill_extra() -> None:
    """transformers are imported when these tests run, not when they are collected."""
    pytest.importorskip("transformers", reason="the [distill] extra (transformers) is not installed")



@pytest.fixture(scope="module")
def dataset(distill_runs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_dataset([distill_runs], tmp_path_factory.mktemp("ds") / "ds", ExportFilters(include_baselines=True, min_f1=0.0)).out


@pytest.fixture(scope="module")
def samples(dataset: Path):
    found = read_samples(dataset)
    assert len(found) >= 4
    return found


def _render(tokenizer, messages, tools, gen: bool = False) -> str:
    return tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=gen)


def test_loss_mask_covers_exactly_the_assistant_turns(hermes_tokenizer: Path, samples) -> None:
    tok = load_tokenizer(hermes_tokenizer)
    sample = max(samples, key=lambda s: s.n_assistant_turns)
    rendered = render_sample(tok, sample.messages, sample.tools)
    ids, mask = rendered.input_ids, rendered.loss_mask
    full = _render(tok, sample.messages, sample.tools)
    assert tok.decode(ids, skip_special_tokens=False) == full  # nothing lost, nothing cut
    expected = "".join(
        _render(tok, sample.messages[: i + 1], sample.tools)[len(_render(tok, sample.messages[:i], sample.tools, True)):]
        for i, m in enumerate(sample.messages) if m["role"] == "assistant"
    )
    trained = tok.decode([t for t, keep in zip(ids, mask, strict=True) if keep], skip_special_tokens=False)
    assert trained == expected and trained.count("<|im_end|>") == sample.n_assistant_turns
    masked = tok.decode([t for t, keep in zip(ids, mask, strict=True) if not keep], skip_special_tokens=False)
    for message in sample.messages:
        if message["role"] != "assistant":
            assert message["content"] in masked
    assert "<|im_start|>assistant" not in trained  # the header the server writes is not learned


def test_each_trained_span_starts_right_after_the_assistant_header(hermes_tokenizer: Path, samples) -> None:
    tok = load_tokenizer(hermes_tokenizer)
    sample = samples[0]
    rendered = render_sample(tok, sample.messages, sample.tools)
    starts = [i for i, keep in enumerate(rendered.loss_mask) if keep and (i == 0 or not rendered.loss_mask[i - 1])]
    assert len(starts) == sample.n_assistant_turns
    for start in starts:
        assert tok.decode(rendered.input_ids[:start], skip_special_tokens=False).endswith("<|im_start|>assistant\n")


@pytest.mark.parametrize("fixture, parser", [("hermes_tokenizer", "hermes"), ("xml_tokenizer", "qwen3_xml"),
                                             ("xml_tokenizer", "auto")])
def test_every_tool_call_round_trips(request, dataset: Path, samples, fixture: str, parser: str, tmp_path: Path) -> None:
    tokenizer = request.getfixturevalue(fixture)
    report = render_dataset(dataset, tokenizer, tmp_path / "r", tool_parser=parser)
    assert report.round_trip_failures == [] and report.mask_failures == [] and report.too_long == []
    assert report.rendered == len(samples) and report.eot_fallback == 0
    rows = pq.read_table(tmp_path / "r" / "train.parquet").to_pylist()
    assert [r["sample_id"] for r in rows] == [s.sample_id for s in samples]
    for row in rows:
        assert len(row["input_ids"]) == len(row["loss_mask"]) == row["n_tokens"]
        assert set(row["loss_mask"]) == {0, 1} and sum(row["loss_mask"]) == row["n_loss_tokens"]


def test_calls_that_do_not_round_trip_are_reported_and_not_written(dataset: Path, samples, tmp_path: Path) -> None:
    lossy = build_tokenizer(tmp_path / "lossy", LOSSY_TEMPLATE)
    report = render_dataset(dataset, lossy, tmp_path / "r", tool_parser="hermes")
    assert report.rendered == 0 and len(report.round_trip_failures) == len(samples)
    assert "arguments {} != " in report.round_trip_failures[0].problems[0]


def test_over_long_samples_are_dropped_never_cut(hermes_tokenizer: Path, dataset: Path, samples, tmp_path: Path) -> None:
    tok = load_tokenizer(hermes_tokenizer)
    lengths = {s.sample_id: len(render_sample(tok, s.messages, s.tools).input_ids) for s in samples}
    limit = sorted(lengths.values())[len(lengths) // 2]
    report = render_dataset(dataset, hermes_tokenizer, tmp_path / "r", max_tokens=limit)
    dropped = {p.sample_id for p in report.too_long}
    assert dropped == {k for k, n in lengths.items() if n > limit} and dropped
    rows = pq.read_table(tmp_path / "r" / "train.parquet").to_pylist()
    assert {r["sample_id"]: r["n_tokens"] for r in rows} == {k: n for k, n in lengths.items() if n <= limit}
    by_id = {s.sample_id: s for s in samples}
    for row in rows:  # every written sample is whole: it decodes back to its full render
        sample = by_id[row["sample_id"]]
        assert tok.decode(row["input_ids"], skip_special_tokens=False) == _render(tok, sample.messages, sample.tools)


def test_a_template_that_renders_the_last_turn_differently_ends_turns_at_the_end_of_turn_token(
    dataset: Path, samples, tmp_path: Path
) -> None:
    qwen3_like = HERMES_TEMPLATE.replace(  # an empty think block on the last assistant turn only
        "<|im_start|>assistant\n{{ m.content or '' }}",
        "<|im_start|>assistant\n{% if loop.last %}<think>\n\n</think>\n\n{% endif %}{{ m.content or '' }}",
    )
    assert qwen3_like != HERMES_TEMPLATE
    folder = build_tokenizer(tmp_path / "tok", qwen3_like)
    report = render_dataset(dataset, folder, tmp_path / "r")
    assert report.mask_failures == [] and report.round_trip_failures == []
    assert report.rendered == report.eot_fallback == len(samples)
    tok = load_tokenizer(folder)
    rendered = render_sample(tok, samples[0].messages, samples[0].tools)
    assert rendered.eot_fallback
    for _, text in rendered.assistant_text:
        assert text.endswith("<|im_end|>") and "<think>" not in text and text.count("<|im_end|>") == 1


def test_a_generation_prompt_unlike_the_assistant_header_fails_loudly(dataset: Path, tmp_path: Path) -> None:
    mismatched = HERMES_TEMPLATE.replace("{%- if add_generation_prompt -%}\n<|im_start|>assistant\n",
                                         "{%- if add_generation_prompt -%}\n<|im_start|>assistant\n<think>\n")
    assert mismatched != HERMES_TEMPLATE
    report = render_dataset(dataset, build_tokenizer(tmp_path / "tok", mismatched), tmp_path / "r")
    assert report.rendered == 0 and report.mask_failures
    assert "generation prompt" in report.mask_failures[0].problems[0]


def test_export_with_a_tokenizer_measures_exact_lengths(distill_runs: Path, hermes_tokenizer: Path, tmp_path: Path) -> None:
    result = export_dataset([distill_runs], tmp_path / "ds", ExportFilters(include_baselines=True, min_f1=0.0, tokenizer=str(hermes_tokenizer)))
    assert result.card.length_method == "tokenizer"
    report = render_dataset(result.out, hermes_tokenizer, tmp_path / "r")
    assert result.card.tokenizer_sha256 == report.tokenizer_sha256 and len(report.tokenizer_sha256) == 64
    rows = {r["sample_id"]: r["n_tokens"] for r in pq.read_table(tmp_path / "r" / "train.parquet").to_pylist()}
    assert rows == {s.sample_id: s.n_tokens for s in result.samples}


def test_render_writes_under_the_dataset_by_default(dataset: Path, hermes_tokenizer: Path) -> None:
    render_dataset(dataset, hermes_tokenizer)
    target = dataset / "rendered" / hermes_tokenizer.name
    assert {p.name for p in target.iterdir()} == {"train.parquet", "render_report.json"}
    with pytest.raises(ClinseekError, match="not an empty folder"):
        render_dataset(dataset, hermes_tokenizer)


def test_a_tokenizer_path_that_is_not_a_local_folder_is_refused(dataset: Path, tmp_path: Path) -> None:
    with pytest.raises(ClinseekError, match="nothing is downloaded"):
        render_dataset(dataset, "Qwen/Qwen3.5-35B-A3B", tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_a_validation_split_is_rendered_to_its_own_file(distill_runs: Path, hermes_tokenizer: Path, tmp_path: Path) -> None:
    result = export_dataset([distill_runs], tmp_path / "ds", ExportFilters(include_baselines=True, min_f1=0.0, val_fraction=0.5))
    report = render_dataset(result.out, hermes_tokenizer, tmp_path / "r")
    assert report.per_split == result.card.per_split
    for split, count in result.card.per_split.items():
        rows = pq.read_table(tmp_path / "r" / f"{split}.parquet").to_pylist()
        assert len(rows) == count and {r["split"] for r in rows} == {split}


def test_parallel_rendering_writes_the_same_files(dataset: Path, hermes_tokenizer: Path, tmp_path: Path) -> None:
    one = render_dataset(dataset, hermes_tokenizer, tmp_path / "one")
    two = render_dataset(dataset, hermes_tokenizer, tmp_path / "two", workers=2)
    assert one.files == two.files and one.rendered == two.rendered
    assert (tmp_path / "one" / "train.parquet").read_bytes() == (tmp_path / "two" / "train.parquet").read_bytes()
