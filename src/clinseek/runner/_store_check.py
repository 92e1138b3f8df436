"""Up-front check that a store holds the patients of the questions about to run."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

import duckdb

from ..errors import ClinseekError
from ..store import connect_store, damage_error, is_damage

logger = logging.getLogger("clinseek.runner")

_SHOWN = 5


def missing_subjects(store: Path, subject_ids: Iterable[int]) -> list[int]:
    """The ``subject_ids`` with no row in the store's ``hosp.patients``, sorted (one query).

    Raises:
        ClinseekError: the store has no readable ``hosp.patients`` table.
    """
    wanted = sorted(set(subject_ids))
    con = connect_store(store)
    try:
        found = con.execute(
            "SELECT DISTINCT subject_id FROM hosp.patients WHERE subject_id IN (SELECT unnest(?::BIGINT[]))",
            [wanted],
        ).fetchall()
    except duckdb.Error as err:
        if is_damage(err):
            raise damage_error(store, err) from None
        raise ClinseekError(
            f"{store}: cannot read hosp.patients ({type(err).__name__}); is it a clinseek store?"
        ) from None
    finally:
        con.close()
    present = {row[0] for row in found}
    return [s for s in wanted if s not in present]


def check_store_subjects(store: Path, subject_ids: Iterable[int]) -> int:
    """Fail when the store holds none of the questions' patients; warn when it lacks some.

    Returns:
        How many distinct subject_ids are missing (their rows will be ``infra_error`` rows).

    Raises:
        ClinseekError: none of the subject_ids is in the store's ``hosp.patients`` (naming the store
            and a few missing ids): the benchmark was built from another store.
    """
    wanted = set(subject_ids)
    missing = missing_subjects(store, wanted)
    shown = ", ".join(str(s) for s in missing[:_SHOWN]) + (", ..." if len(missing) > _SHOWN else "")
    if missing and len(missing) == len(wanted):
        raise ClinseekError(
            f"{store}: none of the {len(wanted)} patients of these questions is in the store "
            f"(missing subject_id {shown}); was the benchmark built from another store?"
        )
    if missing:
        logger.warning(
            "%s: %d of %d patients of these questions are not in the store (subject_id %s); "
            "their questions will be infra_error rows",
            store,
            len(missing),
            len(wanted),
            shown,
        )
    return len(missing)
