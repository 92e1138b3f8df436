"""What a result row answers: a hash of its question and the identity of the store it was run on.

Question ids are positions (``clinseek_risk_prediction_0``...), so every benchmark build reuses
them; a qid alone never says which question a row answers. Resume and the paired comparisons key
on these two hashes as well.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from ..errors import ClinseekError
from ..store import META_SCHEMA, connect_store, damage_error, is_damage, is_postgres_url, redact_url

if TYPE_CHECKING:
    from ..bench import Question

_PROVENANCE = frozenset({"source_file", "source_idx"})
"""Question fields that say where a row sat in its file, not what it asks."""

_STORE_VOLATILE = ("created_at", "last_ingest_at", "clinseek_version")
"""``store_info`` keys that change on a rebuild of the same content (times, the code version)."""


def _digest(value: Any) -> str:
    blob = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def question_hash(question: Question) -> str:
    """SHA-256 (hex, 64 characters) of the question's content as the benchmark file defines it.

    Covers every field of the normalised :class:`~clinseek.bench.Question` (qid, patient,
    ``prediction_time``, task, policy, target ids, linked studies, candidates, gold label and its
    aliases, instruction, question and curated text, image paths) except its provenance
    (``source_file``, ``source_idx``); fields at their default are left out, so a field added later
    with a default does not change the hash of an existing question.
    """
    record = question.model_dump(mode="json", exclude=set(_PROVENANCE), exclude_defaults=True)
    return _digest(record)


def store_identity(store: Path | str) -> str | None:
    """SHA-256 (hex) of what a store holds, independent of where it lies or when it was built.

    Made of the store's ``clinseek_meta.store_info`` (kind, format, seed...) without creation
    times, the code version or source paths, and each table's name, row count, source file
    SHA-256 and source version from ``clinseek_meta.table_info``. Two ingests of the same files
    (or two syntheses with the same seed and size) get the same identity.

    A PostgreSQL source (``postgresql://...``) is identified by its URL without the password (host,
    port, database, user): a live database has no build record to hash.

    Returns:
        The identity, or ``None`` when ``store`` is not a file (runs that never read the store).

    Raises:
        ClinseekError: the file is not a readable clinseek store.
    """
    if is_postgres_url(store):
        return hashlib.sha256(f"postgresql {redact_url(str(store))}".encode()).hexdigest()
    store = Path(store)
    if not store.is_file():
        return None
    con = connect_store(store, read_only=True)
    try:
        info = con.execute(f"SELECT key, value FROM {META_SCHEMA}.store_info ORDER BY key").fetchall()
        tables = con.execute(
            f"SELECT table_name, row_count, source_sha256, source_version FROM {META_SCHEMA}.table_info "
            "ORDER BY table_name"
        ).fetchall()
    except duckdb.Error as err:
        if is_damage(err):
            raise damage_error(store, err) from None
        raise ClinseekError(f"{store}: cannot read its clinseek_meta tables ({type(err).__name__}); "
                            "is it a clinseek store?") from None
    finally:
        con.close()
    kept = [(k, v) for k, v in info if k not in _STORE_VOLATILE and not k.startswith("source.")]
    return _digest({"store_info": kept, "tables": [list(t) for t in tables]})
