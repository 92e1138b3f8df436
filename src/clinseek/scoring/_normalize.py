"""String normalisation and the loader rule that turns label values into strings."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable

_SPACE = re.compile(r"\s+")


def normalize_text(value: str) -> str:
    """Normalise one answer or label string for comparison.

    Unicode NFKC, then leading/trailing whitespace removed, inner whitespace runs collapsed to
    one space, then case-folded (``str.casefold``). ``"  Pleural\\u00a0EFFUSION "`` becomes
    ``"pleural effusion"``. Source: the issue's scoring rule (the reference only lowercases).
    """
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", value)).strip().casefold()


def normalize_set(items: Iterable[str]) -> frozenset[str]:
    """The set of normalised, non-empty items (duplicates counted once)."""
    return frozenset(n for n in (normalize_text(item) for item in items) if n)


def label_strings(value: object) -> list[str]:
    """Flatten a gold label or an answer value to a list of strings (the loader rule).

    - ``None`` → ``[]``; a string → ``[string]``; a number or bool → its JSON text (``2`` → ``"2"``).
    - A dict item → its ``atc_name`` when non-empty, else ``name``, else ``value``, else ``text``,
      else ``answer`` (so ``{"name": "Aspirin", "atc_name": "B01AC06 ..."}`` scores on the ATC
      name, as EHR-Bench's ``*_atc`` tasks do; ``{"name": "2", "value": 2}`` gives ``"2"``);
      a dict with none of these gives its compact JSON dump.
    - A list → the concatenation of its items' strings.

    Raises:
        TypeError: for any other type (the readers turn it into a ``ScoringError``).
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, bool):
        return ["true" if value else "false"]
    if isinstance(value, int | float):
        return [json.dumps(value)]
    if isinstance(value, dict):
        for key in ("atc_name", "name", "value", "text", "answer"):
            item = value.get(key)
            if item is not None and str(item).strip():
                return label_strings(item) if not isinstance(item, dict | list) else [json.dumps(item)]
        return [json.dumps(value, sort_keys=True, separators=(",", ":"))]
    if isinstance(value, list | tuple):
        return [s for item in value for s in label_strings(item)]
    raise TypeError(f"expected a string, number, dict or list, got {type(value).__name__}")
