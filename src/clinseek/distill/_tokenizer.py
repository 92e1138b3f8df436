"""Token counts: the target model's own tokenizer and chat template, or an approximate count.

A local Hugging Face tokenizer directory (``tokenizer.json``, ``tokenizer_config.json`` and a chat
template) is loaded with ``transformers`` (the ``[distill]`` extra), never downloaded: a path that is
not a local directory is refused. Without one, the length is ``ceil(characters / 4)`` of the
canonical JSON of messages and tools, and every record says ``length_method = "approximate"``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ClinseekError, import_optional
from ._convert import canonical_json
from ._model import LengthMethod

CHARS_PER_TOKEN = 4
"""Characters per token of the approximate count (a rough average for English and JSON)."""


TOKENIZER_FILE_PREFIXES = ("tokenizer", "chat_template", "special_tokens_map", "added_tokens", "vocab", "merges")
"""Files of a tokenizer directory that define tokenisation and the chat template (weights are not read)."""


def tokenizer_sha256(path: Path | str) -> str:
    """SHA-256 over the names and bytes of the tokenizer files of a directory (vocabulary, merges,
    configuration, chat template; not model weights): which tokenizer measured or rendered a dataset."""
    digest = hashlib.sha256()
    folder = Path(path)
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name.startswith(TOKENIZER_FILE_PREFIXES))
    for file in files:
        digest.update(file.name.encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


def load_tokenizer(path: Path | str) -> Any:
    """A ``transformers`` tokenizer from a local directory, offline.

    Raises:
        ClinseekError: ``path`` is not a directory, or holds no usable tokenizer or chat template.
        MissingExtraError: ``transformers`` is not installed (``pip install 'clinseek[distill]'``).
    """
    folder = Path(path)
    if not folder.is_dir():
        raise ClinseekError(f"{folder}: not a local tokenizer directory (nothing is downloaded)")
    transformers = import_optional("transformers", "clinseek distill (tokenizer)", extra="distill")
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError) as err:
        raise ClinseekError(f"{folder}: cannot load a tokenizer ({err})") from err
    if not getattr(tokenizer, "chat_template", None):
        raise ClinseekError(f"{folder}: the tokenizer has no chat template (chat_template.jinja or tokenizer_config.json)")
    return tokenizer


def render_text(tokenizer: Any, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], *,
                add_generation_prompt: bool = False, template_kwargs: Mapping[str, Any] | None = None) -> str:
    """The chat template applied to ``messages`` with ``tools=`` (text, not tokenised).

    ``template_kwargs`` are passed to the template (e.g. ``{"enable_thinking": False}``).

    Raises:
        ValueError: the template cannot render these messages (its own error message is kept).
    """
    from jinja2 import TemplateError

    try:
        text = tokenizer.apply_chat_template(list(messages), tools=list(tools) or None, tokenize=False,
                                             add_generation_prompt=add_generation_prompt, **(template_kwargs or {}))
    except (TemplateError, TypeError, KeyError) as err:
        raise ValueError(f"the chat template cannot render this sample: {type(err).__name__}: {err}") from err
    return str(text)


class SampleTokenCounter:
    """Counts the tokens of one sample (system, tools and every turn) as a trainer would see them."""

    def __init__(self, tokenizer_path: Path | str | None = None) -> None:
        self.path = str(tokenizer_path) if tokenizer_path is not None else None
        self.tokenizer = load_tokenizer(tokenizer_path) if tokenizer_path is not None else None
        self.sha256 = tokenizer_sha256(tokenizer_path) if tokenizer_path is not None else None

    @property
    def method(self) -> LengthMethod:
        """``tokenizer`` when a tokenizer was given, else ``approximate``."""
        return "tokenizer" if self.tokenizer is not None else "approximate"

    def count(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> int:
        """Tokens of the rendered sample (exact with a tokenizer; ``ceil(chars / 4)`` without)."""
        if self.tokenizer is None:
            chars = len(canonical_json(list(messages))) + len(canonical_json(list(tools)))
            return math.ceil(chars / CHARS_PER_TOKEN)
        text = render_text(self.tokenizer, messages, tools)
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])
