"""API keys: read from the environment, or from a user credentials file passed in explicitly.

A key is handed straight to the SDK client and never stored on a clinseek record, written to a
result, manifest, cache or log, or included in an error message (messages name the variable only).
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

from ..errors import ModelError


def resolve_secret(env_var: str, credentials_file: Path | None = None) -> str | None:
    """The value of ``env_var`` from the environment, else from ``credentials_file``, else ``None``.

    ``credentials_file`` is a TOML (or JSON) file with a ``keys`` table mapping variable names to
    values, e.g. ``[keys]\\nOPENAI_API_KEY = "sk-…"``; keep it outside any results directory.

    Raises:
        ModelError: the credentials file cannot be read or has no ``keys`` table.
    """
    value = os.environ.get(env_var)
    if value:
        return value
    if credentials_file is None:
        return None
    try:
        text = credentials_file.read_text(encoding="utf-8")
        data = tomllib.loads(text) if credentials_file.suffix != ".json" else json.loads(text)
    except (OSError, ValueError) as err:
        raise ModelError(f"{credentials_file}: cannot read the credentials file: {type(err).__name__}") from None
    keys = data.get("keys")
    if not isinstance(keys, dict):
        raise ModelError(f"{credentials_file}: expected a [keys] table mapping variable names to keys")
    found = keys.get(env_var)
    return str(found) if found else None


def require_secret(env_var: str, credentials_file: Path | None, model: str) -> str:
    """Like ``resolve_secret`` but raises ``ModelError`` naming the variable when no key is found."""
    value = resolve_secret(env_var, credentials_file)
    if not value:
        where = f" or under [keys] in {credentials_file}" if credentials_file else ""
        raise ModelError(f"{model}: no API key: set the environment variable {env_var}{where}")
    return value


__all__ = ["require_secret", "resolve_secret"]
