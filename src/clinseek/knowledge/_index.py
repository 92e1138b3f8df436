"""The offline full-text index: BM25 (``bm25s``) over the knowledge corpus, cached on disk by version."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import bm25s
import numpy as np
from bm25s.tokenization import Tokenized

from ..errors import ClinseekError
from ._document import KnowledgeDocument
from ._tokenize import tokenize

TITLE_WEIGHT = 2
"""How many times a title's terms count (a simple field weight: titles name what a page is about)."""
_DOCS = "documents.jsonl"
_META = "meta.json"


@dataclass(frozen=True, slots=True)
class IndexHit:
    """One search hit: the document, its BM25 score and its rank (0 = best)."""

    document: KnowledgeDocument
    score: float
    rank: int


class KnowledgeIndex:
    """A BM25 index over documents, searchable and addressable by URL. Read-only once built.

    Build one with :meth:`build` (in memory) or :func:`load_or_build_index` (cached on disk).
    Searching is thread-safe (it only reads).
    """

    def __init__(self, documents: Sequence[KnowledgeDocument], retriever: bm25s.BM25, version: str,
                 problems: Sequence[str] = ()) -> None:
        self.documents = tuple(documents)
        self.problems = tuple(problems)
        """Folder files skipped while the corpus was generated (``"<path>: <problem>"``)."""
        self.version = version
        self._retriever = retriever
        self._vocab: dict[str, int] = dict(retriever.vocab_dict)
        self._by_url = {d.url: i for i, d in enumerate(self.documents)}
        self._priors = np.array([d.prior for d in self.documents], dtype=np.float32)

    @classmethod
    def build(cls, documents: Iterable[KnowledgeDocument], version: str) -> KnowledgeIndex:
        """Index ``documents`` (title terms counted :data:`TITLE_WEIGHT` times, then the text) in memory;
        duplicate URLs keep the first."""
        docs: list[KnowledgeDocument] = []
        seen: set[str] = set()
        vocab: dict[str, int] = {}
        ids: list[list[int]] = []
        for doc in documents:
            if doc.url in seen:
                continue
            seen.add(doc.url)
            docs.append(doc)
            title = [vocab.setdefault(t, len(vocab)) for t in tokenize(doc.title)]
            ids.append(title * TITLE_WEIGHT + [vocab.setdefault(t, len(vocab)) for t in tokenize(doc.text)])
        retriever = bm25s.BM25()
        if docs:
            retriever.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
        return cls(docs, retriever, version)

    def __len__(self) -> int:
        return len(self.documents)

    def get(self, url: str) -> KnowledgeDocument | None:
        """The document with this exact URL, or ``None``."""
        i = self._by_url.get(url)
        return None if i is None else self.documents[i]

    def search(self, query: str, k: int = 10) -> list[IndexHit]:
        """The ``k`` best documents for ``query`` by BM25 plus each document's prior, best first.

        Documents that share no term with the query are never returned. Ties keep corpus order.
        """
        terms = [self._vocab[t] for t in tokenize(query) if t in self._vocab]
        if not terms or not self.documents:
            return []
        bm25 = self._retriever.get_scores(terms)
        hits = np.flatnonzero(bm25 > 0)  # a document that shares no term is never a hit
        scores = bm25[hits] + self._priors[hits]
        order = np.lexsort((hits, -scores))[:k]  # best first; ties in corpus order
        return [IndexHit(self.documents[int(hits[j])], float(scores[j]), rank) for rank, j in enumerate(order)]

    def save(self, directory: Path) -> None:
        """Write the index to ``directory`` (created; must not exist yet)."""
        directory.mkdir(parents=True)
        self._retriever.save(str(directory), show_progress=False)
        with (directory / _DOCS).open("w", encoding="utf-8") as fh:
            for doc in self.documents:
                fh.write(json.dumps(asdict(doc), ensure_ascii=False) + "\n")
        (directory / _META).write_text(json.dumps({"version": self.version, "documents": len(self), "problems": list(self.problems)}), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> KnowledgeIndex:
        """Read an index written by :meth:`save`.

        Raises:
            ClinseekError: the directory is not a complete index.
        """
        try:
            meta = json.loads((directory / _META).read_text(encoding="utf-8"))
            with (directory / _DOCS).open(encoding="utf-8") as fh:
                docs = [KnowledgeDocument(**json.loads(line)) for line in fh]
            retriever = bm25s.BM25.load(str(directory), show_progress=False) if docs else bm25s.BM25()
        except (OSError, ValueError, TypeError, KeyError) as err:
            raise ClinseekError(f"{directory}: not a complete knowledge index ({err})") from err
        return cls(docs, retriever, str(meta["version"]), meta.get("problems", ()))


def load_or_build_index(
    cache_dir: Path | None, version: str, make_documents: Callable[[], Iterable[KnowledgeDocument]],
    problems: Sequence[str] = (),
) -> KnowledgeIndex:
    """The index of ``version``: loaded from ``cache_dir/index-<version>`` or built and saved there.

    The directory is written under a temporary name and renamed when complete, so a crash never
    leaves a half-written index that a later run would load; two processes building the same
    version at once both succeed (the loser of the rename discards its copy).

    Args:
        cache_dir: where indexes live; ``None`` builds in memory only.
        version: the corpus version (see :func:`clinseek.knowledge.corpus_version`).
        make_documents: generates the corpus; called only when the index has to be built.
        problems: the list ``make_documents`` appends skipped files to (recorded with the index).

    Raises:
        ClinseekError: a cached index directory is damaged.
        OSError: the cache directory cannot be written.
    """
    final = cache_dir / f"index-{version}" if cache_dir is not None else None
    if final is not None and (final / _META).exists():
        return KnowledgeIndex.load(final)
    index = KnowledgeIndex.build(make_documents(), version)
    index.problems = tuple(problems)
    if final is not None:
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".index-{version}-", dir=final.parent))
        try:
            index.save(tmp / "index")
            os.replace(tmp / "index", final)
        except OSError:
            if not (final / _META).exists():
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return index
