"""``render_dataset``: samples → token ids with an assistant-only loss mask, via the target chat template.

Each sample is rendered once with the tokenizer's own chat template (``tools=`` given) and
tokenised once with character offsets. An assistant turn's span is the text between the render of
the turns before it with the generation prompt and the render including it (or, for templates
that render the last turn differently, the first end-of-turn token after its start); tokens
starting in a span get loss 1 (the turn's text, tool-call markup and end-of-turn token), all
others 0. A template whose generation prompt is not its assistant header, or a turn that gets no
loss token (the silent all-masked trap), fails that sample loudly. The tokens of each span are decoded and their tool calls
re-parsed; a sample whose calls do not round-trip is reported and not written. A sample longer than
``max_tokens`` is dropped whole, never cut.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ClinseekError
from ._card import card_markdown
from ._families import get_family
from ._model import DatasetCard, Sample
from ._parse import ParseFailure, ToolParser, compare_calls, parse_tool_calls
from ._tokenizer import load_tokenizer, render_text, tokenizer_sha256
from ._write import StagingDir, check_out, sha256_file

TOKENS_SCHEMA = pa.schema([
    pa.field("sample_id", pa.string()), pa.field("split", pa.string()), pa.field("input_ids", pa.list_(pa.int32())),
    pa.field("loss_mask", pa.list_(pa.int8())), pa.field("n_tokens", pa.int64()), pa.field("n_loss_tokens", pa.int64()),
])
"""Columns of a rendered ``train.parquet`` / ``val.parquet``."""


class SampleProblem(BaseModel):
    """A sample that was not written, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sample_id: str
    problems: list[str]


class RenderReport(BaseModel):
    """``render_report.json``: what :func:`render_dataset` wrote and every sample it did not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = 1
    tokenizer: str
    tokenizer_sha256: str
    """Fingerprint of the tokenizer directory (files' names and bytes, chat template included)."""
    tool_parser: str
    family: str | None = None
    """The template family rendered for (``None``: parser and arguments given directly)."""
    template_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Chat-template arguments of every render (serve the student with the same)."""
    max_tokens: int
    samples_in: int
    rendered: int
    per_split: dict[str, int] = Field(default_factory=dict)
    """Rendered samples per split file."""
    tokens: int
    loss_tokens: int
    too_long: list[SampleProblem] = Field(default_factory=list)
    """Dropped whole (longer than ``max_tokens``); never left- or right-cut."""
    round_trip_failures: list[SampleProblem] = Field(default_factory=list)
    """Rendered tool calls that the parser did not read back as the sample's calls."""
    mask_failures: list[SampleProblem] = Field(default_factory=list)
    """The template's generation prompt does not match its assistant header, a turn's end cannot be
    found, or an assistant turn got no loss token."""
    eot_fallback: int = 0
    """Samples where some turn's end was found by the end-of-turn token, not a prefix render."""
    files: dict[str, str] = Field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Rendered:
    """One rendered sample."""

    input_ids: list[int]
    loss_mask: list[int]
    assistant_text: list[tuple[int, str]]
    """(message index, decoded loss-masked tokens of that assistant turn)."""
    eot_fallback: bool = False
    """Some turn's end was found by the end-of-turn token (the template renders a last turn differently)."""


class MaskError(ClinseekError, ValueError):
    """The assistant-only loss mask cannot be computed faithfully for a sample (also a ``ValueError``)."""


def _turn_end(tokenizer: Any, full: str, start: int, through: str, index: int) -> tuple[int, bool]:
    """End of the assistant turn starting at ``start``, and whether the end-of-turn fallback was used.

    Normally the render through this turn is a prefix of the full render and ends the turn. Some
    templates render the *last* assistant turn differently (Qwen3 adds an empty think block to
    it), so that render is not a prefix; then the turn ends after the first end-of-turn token (the
    tokenizer's ``eos_token``, e.g. ``<|im_end|>``) from ``start``.
    """
    if full.startswith(through) and len(through) > start:
        return len(through), False
    eot = getattr(tokenizer, "eos_token", None)
    found = full.find(eot, start) if isinstance(eot, str) and eot else -1
    if found < 0:
        raise MaskError(f"message {index}: the render through this turn is not a prefix of the full render "
                        "and no end-of-turn token (eos_token) follows the turn")
    return found + len(eot), True  # type: ignore[arg-type]


def _spans(tokenizer: Any, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]],
           full: str, kwargs: Mapping[str, Any]) -> tuple[list[tuple[int, int, int]], bool]:
    spans = []
    fallback = False
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        before = render_text(tokenizer, messages[:index], tools, add_generation_prompt=True, template_kwargs=kwargs)
        if not full.startswith(before):
            raise MaskError(f"message {index}: the render before this turn with the generation prompt is not a "
                            "prefix of the full render (the template's assistant header differs from its "
                            "generation prompt)")
        through = render_text(tokenizer, messages[: index + 1], tools, template_kwargs=kwargs)
        end, used = _turn_end(tokenizer, full, len(before), through, index)
        fallback = fallback or used
        spans.append((len(before), end, index))
    return spans, fallback


def render_sample(tokenizer: Any, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]],
                  template_kwargs: Mapping[str, Any] | None = None) -> Rendered:
    """Token ids, loss mask and per-assistant-turn decoded text of one sample.

    ``template_kwargs`` go to every render of the chat template (a family's, e.g. ``enable_thinking``).

    Raises:
        MaskError: the template is not prefix-stable, or an assistant turn has no loss token.
        ValueError: the template cannot render the sample.
    """
    kwargs = dict(template_kwargs or {})
    full = render_text(tokenizer, messages, tools, template_kwargs=kwargs)
    encoded = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True)
    ids: list[int] = list(encoded["input_ids"])
    offsets: list[tuple[int, int]] = [tuple(o) for o in encoded["offset_mapping"]]
    starts = [a for a, _ in offsets]  # non-decreasing: tokens are in text order
    mask = [0] * len(ids)
    texts = []
    spans, fallback = _spans(tokenizer, messages, tools, full, kwargs)
    for start, end, index in spans:
        picked = range(bisect_left(starts, start), bisect_left(starts, end))
        if not picked:
            raise MaskError(f"message {index}: the assistant turn got no loss token")
        for t in picked:
            mask[t] = 1
        texts.append((index, tokenizer.decode([ids[t] for t in picked], skip_special_tokens=False)))
    return Rendered(ids, mask, texts, fallback)


def round_trip(rendered: Rendered, messages: Sequence[dict[str, Any]], parser: ToolParser) -> list[str]:
    """Problems re-parsing each assistant turn's tool calls from its loss-masked tokens (``[]`` = all good)."""
    problems = []
    for index, text in rendered.assistant_text:
        try:
            parsed = parse_tool_calls(text, parser)
        except ParseFailure as err:
            problems.append(f"message {index}: {err}")
            continue
        problems += [f"message {index}: {p}" for p in compare_calls(parsed, messages[index].get("tool_calls", []))]
    return problems


def read_samples(dataset: Path | str, split: str = "train") -> list[Sample]:
    """The samples of one split of a dataset folder (``<split>.jsonl``), in file order.

    Raises:
        ClinseekError: no such file, or a line that is not a valid sample (file and line named).
    """
    path = Path(dataset) / f"{split}.jsonl"
    if not path.is_file():
        raise ClinseekError(f"{path}: no such file (make a dataset with 'clinseek distill export')")
    samples = []
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            samples.append(Sample.model_validate_json(line))
        except ValidationError as err:
            first = err.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise ClinseekError(f"{path}:{line_no}: field {field!r}: {first['msg']}") from err
    return samples


def read_card(dataset: Path | str) -> DatasetCard:
    """The dataset's ``card.json``.

    Raises:
        ClinseekError: missing or invalid.
    """
    path = Path(dataset) / "card.json"
    try:
        return DatasetCard.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as err:
        raise ClinseekError(f"{path}: not a readable dataset card ({err})") from err


class _Collector:
    def __init__(self, max_tokens: int, template_kwargs: Mapping[str, Any] | None = None) -> None:
        self.max_tokens = max_tokens
        self.kwargs = dict(template_kwargs or {})
        self.rows: list[dict[str, Any]] = []
        self.too_long: list[SampleProblem] = []
        self.trips: list[SampleProblem] = []
        self.masks: list[SampleProblem] = []
        self.fallbacks = 0

    def add(self, tokenizer: Any, sample: Sample, parser: ToolParser) -> None:
        try:
            rendered = render_sample(tokenizer, sample.messages, sample.tools, self.kwargs)
        except ValueError as err:
            self.masks.append(SampleProblem(sample_id=sample.sample_id, problems=[str(err)]))
            return
        if len(rendered.input_ids) > self.max_tokens:
            problem = f"{len(rendered.input_ids)} tokens > {self.max_tokens}"
            self.too_long.append(SampleProblem(sample_id=sample.sample_id, problems=[problem]))
            return
        self.fallbacks += rendered.eot_fallback
        problems = round_trip(rendered, sample.messages, parser)
        if problems:
            self.trips.append(SampleProblem(sample_id=sample.sample_id, problems=problems))
            return
        self.rows.append({"sample_id": sample.sample_id, "split": sample.split, "input_ids": rendered.input_ids,
                          "loss_mask": rendered.loss_mask, "n_tokens": len(rendered.input_ids),
                          "n_loss_tokens": sum(rendered.loss_mask)})


    def merge(self, other: _Collector) -> None:
        """Append ``other``'s results after this one's (chunks are merged in sample order)."""
        self.rows += other.rows
        self.too_long += other.too_long
        self.trips += other.trips
        self.masks += other.masks
        self.fallbacks += other.fallbacks


def _render_chunk(tokenizer_path: str, samples: Sequence[Sample], parser: ToolParser, max_tokens: int,
                  kwargs: Mapping[str, Any] | None = None) -> _Collector:
    """Render a contiguous chunk of samples (one worker process loads the tokenizer once)."""
    tokenizer = load_tokenizer(tokenizer_path)
    collector = _Collector(max_tokens, kwargs)
    for sample in samples:
        collector.add(tokenizer, sample, parser)
    return collector


def _render_all(tokenizer_path: Path | str, samples: Sequence[Sample], parser: ToolParser, max_tokens: int,
                workers: int, kwargs: Mapping[str, Any]) -> _Collector:
    if workers <= 1 or len(samples) < 2:
        return _render_chunk(str(tokenizer_path), samples, parser, max_tokens, kwargs)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    size = -(-len(samples) // workers)
    chunks = [samples[i : i + size] for i in range(0, len(samples), size)]
    merged = _Collector(max_tokens, kwargs)
    context = multiprocessing.get_context("spawn")  # no fork after the tokenizers library started threads
    with ProcessPoolExecutor(max_workers=len(chunks), mp_context=context) as pool:
        futures = [pool.submit(_render_chunk, str(tokenizer_path), chunk, parser, max_tokens, kwargs) for chunk in chunks]
        for future in futures:
            merged.merge(future.result())
    return merged


def _write_rendered(folder: Path, rows: list[dict[str, Any]], splits: Sequence[str]) -> dict[str, str]:
    hashes = {}
    for split in splits:
        name = f"{split}.parquet"
        chosen = [r for r in rows if r["split"] == split]
        pq.write_table(pa.Table.from_pylist(chosen, schema=TOKENS_SCHEMA), folder / name, compression="zstd")
        hashes[name] = sha256_file(folder / name)
    return hashes


def render_dataset(dataset: Path | str, tokenizer_path: Path | str, out: Path | str | None = None, *,
                   max_tokens: int | None = None, tool_parser: ToolParser = "auto", workers: int = 1,
                   family: str | None = None, template_kwargs: Mapping[str, Any] | None = None) -> RenderReport:
    """Render a dataset for one target model: ``train.parquet`` (token ids, loss mask; ``val.parquet``
    too when the dataset has a validation split) and ``render_report.json``.

    Args:
        dataset: a folder written by :func:`export_dataset`.
        tokenizer_path: a local Hugging Face tokenizer directory with a chat template (never downloaded).
        out: output folder (default ``DATASET/rendered/<tokenizer folder name>``); must be new or empty.
        max_tokens: drop samples longer than this (default: the export's ``max_tokens``).
        tool_parser: how rendered tool calls are read back (``hermes``, ``qwen3_xml``, ``llama3_json``,
            ``gemma4`` or ``auto``); default: the family's parser, else ``auto``.
        workers: processes rendering contiguous chunks in parallel (output identical to ``1``).
        family: a :data:`TEMPLATE_FAMILIES` name (``qwen3``, ``qwen3.5``, ``llama3``, ``gemma4``): its parser
            and chat-template arguments (recorded in the report; serve the student with the same).
        template_kwargs: chat-template arguments, over the family's (e.g. ``{"enable_thinking": False}``).

    Raises:
        ClinseekError: an unreadable dataset or tokenizer, an unknown family, or ``out`` exists and is not empty.
        MissingExtraError: ``transformers`` is not installed.
    """
    card = read_card(dataset)
    splits = ["train", "val"] if (Path(dataset) / "val.jsonl").is_file() else ["train"]
    samples = [s for split in splits for s in read_samples(dataset, split)]
    load_tokenizer(tokenizer_path)  # fail early on a bad tokenizer, before any worker starts
    target = Path(out) if out is not None else Path(dataset) / "rendered" / Path(tokenizer_path).resolve().name
    check_out(target)
    limit = max_tokens if max_tokens is not None else card.filters.max_tokens
    chosen = get_family(family) if family is not None else None
    parser: ToolParser = chosen.tool_parser if chosen is not None and tool_parser == "auto" else tool_parser
    kwargs = {**(chosen.template_kwargs if chosen is not None else {}), **(template_kwargs or {})}
    collector = _render_all(tokenizer_path, samples, parser, limit, workers, kwargs)
    staging = StagingDir(target)
    try:
        files = _write_rendered(staging.path, collector.rows, splits)
        report = RenderReport(
            tokenizer=str(tokenizer_path), tokenizer_sha256=tokenizer_sha256(tokenizer_path), tool_parser=parser,
            family=family, template_kwargs=kwargs, max_tokens=collector.max_tokens,
            samples_in=len(samples), rendered=len(collector.rows),
            per_split={split: sum(r["split"] == split for r in collector.rows) for split in splits},
            tokens=sum(r["n_tokens"] for r in collector.rows),
            loss_tokens=sum(r["n_loss_tokens"] for r in collector.rows), too_long=collector.too_long,
            round_trip_failures=collector.trips, mask_failures=collector.masks, eot_fallback=collector.fallbacks,
            files=files,
        )
        (staging.path / "render_report.json").write_text(json.dumps(report.model_dump(), indent=2) + "\n",
                                                         encoding="utf-8")
        staging.commit()
    except BaseException:
        staging.discard()
        raise
    return report


def rendered_reports(dataset: Path | str) -> dict[str, RenderReport]:
    """The render reports of ``DATASET/rendered/*/render_report.json``, by folder name (unreadable ones skipped)."""
    out = {}
    for path in sorted((Path(dataset) / "rendered").glob("*/render_report.json")):
        try:
            out[path.parent.name] = RenderReport.model_validate_json(path.read_bytes())
        except (OSError, ValidationError):
            continue
    return out


def card_text(dataset: Path | str) -> str:
    """The dataset card for people (``README.md``'s text: teacher, filters, exclusions, refusals, tokens, sources,
    prompts) followed by the exact token counts of every rendered folder under ``DATASET/rendered``.

    Raises:
        ClinseekError: no readable ``card.json``.
    """
    lines = [card_markdown(read_card(dataset)).rstrip("\n"), "", "## Rendered", ""]
    reports = rendered_reports(dataset)
    if not reports:
        lines.append("Not rendered yet (`clinseek distill render DATASET --tokenizer DIR --family ...`).")
    for name, r in reports.items():
        dropped = len(r.too_long) + len(r.round_trip_failures) + len(r.mask_failures)
        lines.append(f"- `{name}`: family {r.family or '-'}, parser {r.tool_parser}, template arguments "
                     f"{json.dumps(r.template_kwargs) if r.template_kwargs else 'none'}; {r.rendered} of {r.samples_in} "
                     f"samples, {r.tokens} tokens of which {r.loss_tokens} trained (assistant turns); {dropped} dropped "
                     f"({len(r.too_long)} too long, {len(r.round_trip_failures)} not round-tripping, "
                     f"{len(r.mask_failures)} mask failures); tokenizer sha256 {r.tokenizer_sha256[:16]}")
    return "\n".join(lines) + "\n"
