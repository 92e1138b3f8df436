"""Token usage: the one shape of token counts, for one model call or a sum of calls."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Usage(BaseModel):
    """Token counts of one call (or a sum of calls), as the provider reported them.

    ``input_tokens`` counts **every** prompt token, including those read from or written to a
    prompt cache; ``cached_input_tokens`` and ``cache_write_tokens`` are parts of it. (OpenAI's
    ``prompt_tokens`` already has this meaning; Anthropic's ``input_tokens`` excludes cache reads and
    writes, so its provider adds them.) A model reply, a :class:`CallRecord` and a :class:`ResultRow`
    all carry this shape.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int = 0
    """Prompt tokens, cached ones included."""
    output_tokens: int = 0
    """Generated tokens, reasoning included."""
    cached_input_tokens: int = 0
    """Prompt tokens served from the provider's prompt cache (billed at the cached rate)."""
    cache_write_tokens: int = 0
    """Prompt tokens written to the provider's prompt cache (Anthropic; billed at the cache-write rate)."""

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )
