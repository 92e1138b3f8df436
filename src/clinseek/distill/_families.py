"""Chat-template families a distilled student is trained in: how their tool calls are read back, and how to render.

A family says which serving parser reads the template's tool-call markup (:mod:`clinseek.distill._parse`)
and which chat-template arguments rendering (and serving) must use so that the generation prompt is a
prefix of every past assistant turn. The template itself is always the one in the user's tokenizer
directory; nothing here replaces it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ClinseekError
from ._parse import ToolParser


@dataclass(frozen=True, slots=True)
class TemplateFamily:
    """One chat-template family.

    Attributes:
        name: the family name used by ``--family``.
        tool_parser: the parser of :func:`clinseek.distill.parse_tool_calls` that reads its calls.
        template_kwargs: chat-template arguments for rendering and for serving (vLLM
            ``--default-chat-template-kwargs``; ``clinseek distill serve`` uses them itself).
        vllm_tool_parser: vLLM's ``--tool-call-parser`` for serving the student.
        models: the model families the template comes with.
        note: what to know about the template when training on it.
    """

    name: str
    tool_parser: ToolParser
    vllm_tool_parser: str
    models: str
    note: str
    template_kwargs: Mapping[str, Any] = field(default_factory=dict)


TEMPLATE_FAMILIES: dict[str, TemplateFamily] = {
    "qwen3": TemplateFamily(
        "qwen3", "hermes", "hermes", "Qwen3 (dense and MoE)",
        "calls as <tool_call> JSON, tool results inside user turns as <tool_response>; the template gives the "
        "last assistant turn an empty think block that earlier turns lack, so those turns end at <|im_end|> "
        "(counted as eot_fallback)",
    ),
    "qwen3.5": TemplateFamily(
        "qwen3.5", "qwen3_xml", "qwen3_xml", "Qwen3.5 (and Qwen3-Coder)",
        "calls as <tool_call><function=...><parameter=...> XML; rendered and served with thinking off, as the "
        "paper served its student (an empty think block opens every assistant turn)",
        {"enable_thinking": False},
    ),
    "llama3": TemplateFamily(
        "llama3", "llama3_json", "llama3_json", "Llama 3.1 / 3.2 / 3.3 Instruct",
        "one {\"name\", \"parameters\"} JSON call per assistant turn, tool results in ipython turns; the "
        "template refuses a turn with several calls, so such samples are listed as failures, never written",
    ),
    "gemma4": TemplateFamily(
        "gemma4", "gemma4", "gemma4", "Gemma 4 instruction-tuned",
        "calls as <|tool_call>call:NAME{...}<tool_call|>; with thinking off the generation prompt adds an "
        "empty thought channel that past model turns do not have (the mask would be wrong), so it is rendered "
        "and must be served with enable_thinking true",
        {"enable_thinking": True},
    ),
}
"""The supported families, by name."""


def get_family(name: str) -> TemplateFamily:
    """The family called ``name``.

    Raises:
        ClinseekError: an unknown name (the known ones are listed).
    """
    try:
        return TEMPLATE_FAMILIES[name]
    except KeyError:
        raise ClinseekError(f"unknown template family {name!r}; known: {', '.join(TEMPLATE_FAMILIES)}") from None
