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
    - A dict item → its first non-empty ``name``, ``atc_name``, ``value``, ``text``, ``answer``
      (``{"name": "2", "value": 2}`` gives ``"2"``); a dict with none of these gives its
      compact JSON dump. For gold labels, :func:`gold_items` also keeps ``atc_name`` as an alias.
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
        for key in ("name", "atc_name", "value", "text", "answer"):
            item = value.get(key)
            if item is not None and str(item).strip():
                return label_strings(item) if not isinstance(item, dict | list) else [json.dumps(item)]
        return [json.dumps(value, sort_keys=True, separators=(",", ":"))]
    if isinstance(value, list | tuple):
        return [s for item in value for s in label_strings(item)]
    raise TypeError(f"expected a string, number, dict or list, got {type(value).__name__}")


def gold_items(value: object) -> tuple[list[str], list[list[str]]]:
    """Gold names and, per name, its aliases (the loader rule for gold labels).

    Each item's name is read by :func:`label_strings`; a dict item's ``atc_name`` that differs
    from its name becomes an alias, so ``{"name": "Aspirin", "atc_name": "B01AC06"}`` is matched by
    either ``aspirin`` or ``b01ac06`` (EHR-Bench ``*_atc`` and AgentEHR prescription labels).
    Empty names are dropped. Aliases is ``[]`` when no item has one.

    Raises:
        TypeError: for a value of another type.
    """
    items = value if isinstance(value, list | tuple) else [value]
    names: list[str] = []
    aliases: list[list[str]] = []
    for item in items:
        for name in label_strings(item):
            if not name.strip():
                continue
            atc = item.get("atc_name") if isinstance(item, dict) else None
            names.append(name)
            aliases.append([str(atc)] if atc and str(atc).strip() and str(atc) != name else [])
    return names, aliases if any(aliases) else []
