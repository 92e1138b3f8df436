"""The unit of the knowledge corpus: one document with a stable URL, a title and plain text."""

from __future__ import annotations

from dataclasses import dataclass

KB_SCHEME = "clinseek-kb"
"""URL scheme of bundled and local documents (``clinseek-kb://icd10cm/I5023``)."""


@dataclass(frozen=True, slots=True)
class KnowledgeDocument:
    """One searchable document.

    Attributes:
        url: stable identifier, ``clinseek-kb://<source>/<key>`` for the bundled corpus, or
            ``file://<absolute path>`` for a user's folder; what ``browser.open`` accepts.
        title: one-line title shown in search results.
        text: the body as plain text (Markdown allowed); lines are kept as written.
        source: the generator or folder it came from (``icd10cm``, ``ccs``, ``labs``, ``folder``...).
        prior: added to the BM25 score (0 for most documents): a small static preference that
            breaks near-ties, e.g. a CCS category page over each of its member codes, or the most
            used of several lab items with the same name.
    """

    url: str
    title: str
    text: str
    source: str
    prior: float = 0.0


def kb_url(source: str, key: str) -> str:
    """The bundled-corpus URL of ``key`` in ``source`` (``kb_url("ccs", "108")``)."""
    return f"{KB_SCHEME}://{source}/{key}"
