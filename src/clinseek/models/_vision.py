"""Which models take images: a per-model table of name patterns, and the reader of the declared flag.

A ``ChatModel`` declares ``supports_vision``; the built-in providers set it from
:data:`VISION_PATTERNS` (first matching pattern wins; no match = text only). ``clinseek run
--vision/--no-vision`` overrides it (e.g. a vLLM server started without the vision encoder).
"""

from __future__ import annotations

from fnmatch import fnmatchcase

VISION_PATTERNS: tuple[tuple[str, bool], ...] = (
    # Anthropic (also on Bedrock / Vertex): every Claude 3 and later takes images; Claude 2 / Instant do not.
    ("*claude-2*", False),
    ("*claude-instant*", False),
    ("*claude*", True),
    # OpenAI: text-only families first.
    ("gpt-3.5*", False),
    ("gpt-4", False),
    ("gpt-4-0*", False),
    ("gpt-oss*", False),
    ("*/gpt-oss*", False),
    ("o1-mini*", False),
    ("o3-mini*", False),
    ("gpt-4o*", True),
    ("chatgpt-4o*", True),
    ("gpt-4-turbo*", True),
    ("gpt-4.1*", True),
    ("gpt-4.5*", True),
    ("gpt-5*", True),
    ("o1", True),
    ("o1-2*", True),
    ("o3", True),
    ("o3-2*", True),
    ("o3-pro*", True),
    ("o4-mini*", True),
    ("gemini*", True),
    # Open-weight vision-language families (as served by vLLM, SGLang, Ollama...).
    ("*-vl-*", True),
    ("*-vl", True),
    ("*vl-*", True),
    ("*vision*", True),
    ("*llava*", True),
    ("*pixtral*", True),
    ("*internvl*", True),
    ("*qwen3.5*", True),
    ("*gemma-3*", True),
    ("*llama-4*", True),
)
"""``(pattern, takes images)`` matched case-insensitively against the model id (the part after
``provider:``), first match wins; a model that matches nothing is treated as text only."""


def vision_capable(model_id: str) -> bool:
    """Whether the model ``model_id`` (without the ``provider:`` prefix) takes images, per :data:`VISION_PATTERNS`."""
    lowered = model_id.lower()
    return next((takes for pattern, takes in VISION_PATTERNS if fnmatchcase(lowered, pattern)), False)


def accepts_images(model: object) -> bool:
    """The declared ``supports_vision`` of a ``ChatModel``.

    A model object that declares nothing (one written before the flag existed) is taken to accept
    images, which is what the loop did before: images are then attached, never dropped silently.
    """
    return bool(getattr(model, "supports_vision", True))
