"""Trajectory distillation: scored agent runs → supervised fine-tuning data, rendered for a target model.

``export_dataset`` filters runs explicitly (finished, F1 threshold, no tool-protocol errors, length,
no overlap with excluded evaluation benchmarks) and writes OpenAI-style messages with structured
tool calls and the run's tool schemas as JSONL and Parquet, plus a dataset card. ``render_dataset``
applies a local Hugging Face chat template (``tools=``) and writes token ids with an assistant-only
loss mask, checking that every tool call round-trips through the matching parser and dropping
(never cutting) over-long samples, for a template family (Qwen3, Qwen3.5, Llama 3, Gemma 4).
``train_sft`` fine-tunes a local model on the rendered tokens with TRL's SFT trainer (assistant-only loss);
``StudentServer`` serves the result as an OpenAI-compatible endpoint for ``clinseek run``.
``serving_prompts`` gives the exact system prompt and tools the student must be served with; ``card_text``
states teacher, filters, exclusions and token counts. See ``docs/distill.md``.
"""

from ._convert import Converted, convert_messages, wire_tools
from ._exclude import Exclusions, load_exclusions
from ._export import ExportResult, export_dataset
from ._families import TEMPLATE_FAMILIES, TemplateFamily, get_family
from ._model import (
    DatasetCard,
    ExportFilters,
    LengthMethod,
    PromptRecord,
    Refusal,
    RefusalReason,
    Sample,
    SourceRun,
    TokenStats,
)
from ._parse import TOOL_PARSERS, ParseFailure, ToolParser, compare_calls, parse_tool_calls
from ._render import (
    MaskError,
    Rendered,
    RenderReport,
    SampleProblem,
    card_text,
    read_card,
    read_samples,
    render_dataset,
    render_sample,
    rendered_reports,
    round_trip,
)
from ._serve import StudentModel, StudentServer
from ._serving import check_serving, serving_prompts
from ._tokenizer import SampleTokenCounter, load_tokenizer
from ._train import TRAINING_CARD, TrainCard, TrainConfig, train_sft

__all__ = [
    "TEMPLATE_FAMILIES",
    "TOOL_PARSERS",
    "TRAINING_CARD",
    "Converted",
    "DatasetCard",
    "Exclusions",
    "ExportFilters",
    "ExportResult",
    "LengthMethod",
    "MaskError",
    "ParseFailure",
    "PromptRecord",
    "Refusal",
    "RefusalReason",
    "RenderReport",
    "Rendered",
    "Sample",
    "SampleProblem",
    "SampleTokenCounter",
    "SourceRun",
    "StudentModel",
    "StudentServer",
    "TemplateFamily",
    "TokenStats",
    "ToolParser",
    "TrainCard",
    "TrainConfig",
    "card_text",
    "check_serving",
    "compare_calls",
    "convert_messages",
    "export_dataset",
    "get_family",
    "load_exclusions",
    "load_tokenizer",
    "parse_tool_calls",
    "read_card",
    "read_samples",
    "render_dataset",
    "render_sample",
    "rendered_reports",
    "round_trip",
    "serving_prompts",
    "train_sft",
    "wire_tools",
]
