"""An optional on-disk response cache: reruns are free and reproducible.

Key = SHA-256 of the canonical JSON of (model name, messages, tools, generation settings). The
value is the ``ModelResponse`` JSON, written to a temporary file and renamed into place, so a
killed run never leaves a half-written entry. Responses hold no credentials (providers never put
keys on them), and entries pass the runner's redaction before they are written.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..models import ChatModel, GenerateConfig, Message, ModelResponse, accepts_images
from ._secrets import redact_line


def cache_key(model: str, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]],
              config: GenerateConfig | None) -> str:
    """The cache key of one request (hex SHA-256)."""
    payload = {
        "model": model,
        "messages": [m.model_dump(mode="json") for m in messages],
        "tools": list(tools),
        "config": (config or GenerateConfig()).model_dump(mode="json"),
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Responses on disk under ``root/<key[:2]>/<key>.json``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> ModelResponse | None:
        """The cached response, or ``None`` (a corrupt entry counts as a miss)."""
        path = self._path(key)
        try:
            response = ModelResponse.model_validate_json(path.read_bytes())
        except (OSError, ValidationError, ValueError):
            self.misses += 1
            return None
        self.hits += 1
        return response

    def put(self, key: str, response: ModelResponse) -> None:
        """Store ``response`` atomically."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(redact_line(response.model_dump_json()), encoding="utf-8")
        os.replace(tmp, path)


class CachedModel:
    """A ``ChatModel`` that answers from a :class:`ResponseCache` and fills it on a miss."""

    def __init__(self, model: ChatModel, cache: ResponseCache) -> None:
        self.inner = model
        self.name = model.name
        self.supports_native_tools = model.supports_native_tools
        self.supports_vision = accepts_images(model)
        self.cache = cache

    async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                       config: GenerateConfig | None = None) -> ModelResponse:
        """Return the cached response for this exact request, else call the model and cache it."""
        key = cache_key(self.name, messages, tools, config)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        response = await self.inner.generate(messages, tools, config)
        self.cache.put(key, response)
        return response

    async def aclose(self) -> None:
        """Close the wrapped model."""
        await self.inner.aclose()
