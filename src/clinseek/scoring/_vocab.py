"""The closed answer vocabularies (package data ``vocabulary.json``) and name canonicalisation."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ._normalize import normalize_text


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """Closed vocabularies mapping normalised names and synonyms to one canonical name.

    Attributes:
        maps: vocabulary name → {normalised synonym or canonical → canonical name}.
        tasks: task name → the vocabulary that task's answers come from.
        union: every vocabulary merged; a synonym that means different canonical names in
            different vocabularies (``"pneumonia"``) is left out, so it is never mapped by guess.
    """

    maps: dict[str, dict[str, str]]
    tasks: dict[str, str]
    union: dict[str, str]

    def canonical(self, name: str, task: str | None = None) -> str | None:
        """The canonical name of ``name`` in ``task``'s vocabulary (the union for other tasks).

        Returns ``None`` when the name is not in the vocabulary. Matching is exact after
        :func:`normalize_text`; there is no fuzzy or embedding step.
        """
        table = self.maps.get(self.tasks.get(task or "", ""), self.union)
        return table.get(normalize_text(name))

    def names(self, vocabulary: str) -> list[str]:
        """The canonical names of one vocabulary, sorted."""
        return sorted(set(self.maps[vocabulary].values()))


def _build(data: dict[str, object]) -> Vocabulary:
    vocabularies = data["vocabularies"]
    assert isinstance(vocabularies, dict)
    maps: dict[str, dict[str, str]] = {}
    for vocab_name, entries in vocabularies.items():
        table: dict[str, str] = {}
        for canonical, synonyms in entries.items():
            for alias in (canonical, *synonyms):
                key = normalize_text(alias)
                if key in table and table[key] != canonical:
                    raise ValueError(f"vocabulary {vocab_name}: {alias!r} maps to two names")
                table[key] = canonical
        maps[vocab_name] = table
    union: dict[str, str] = {}
    clashes: set[str] = set()
    for table in maps.values():
        for key, canonical in table.items():
            if key in union and normalize_text(union[key]) != normalize_text(canonical):
                clashes.add(key)
            union.setdefault(key, canonical)
    tasks = data["tasks"]
    assert isinstance(tasks, dict)
    return Vocabulary(maps, dict(tasks), {k: v for k, v in union.items() if k not in clashes})


@cache
def load_vocabulary() -> Vocabulary:
    """The shipped vocabulary (CheXpert 14, the 25 MedMod phenotypes, EHRXQA findings), read once."""
    text = resources.files("clinseek.scoring").joinpath("vocabulary.json").read_text(encoding="utf-8")
    return _build(json.loads(text))
