"""Up-front check that a store holds the patients of the questions about to run."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

import duckdb

from ..errors import ClinseekError
from ..store import (
    connect_store,
    damage_error,
    event_index_current,
    finished_tables,
    is_damage,
    row_instants_current,
)

logger = logging.getLogger("clinseek.runner")

_SHOWN = 5


def missing_subjects(store: Path, subject_ids: Iterable[int]) -> list[int]:
    """The ``subject_ids`` with no row in the store's ``hosp.patients``, sorted (one query).

    Raises:
        ClinseekError: the store has no readable ``hosp.patients`` table.
    """
    return _read(store, subject_ids)[0]


def _read(store: Path, subject_ids: Iterable[int]) -> tuple[list[int], bool]:
    """(:func:`missing_subjects`, whether the store's event index and row instants are those this code writes) on
    one connection."""
    wanted = sorted(set(subject_ids))
    con = connect_store(store)
    try:
        found = con.execute(
            "SELECT DISTINCT subject_id FROM hosp.patients WHERE subject_id IN (SELECT unnest(?::BIGINT[]))",
            [wanted],
        ).fetchall()
        finished = finished_tables(con)
        current = event_index_current(con, finished) and row_instants_current(con, finished)
    except duckdb.Error as err:
        if is_damage(err):
            raise damage_error(store, err) from None
        raise ClinseekError(
            f"{store}: cannot read hosp.patients ({type(err).__name__}); is it a clinseek store?"
        ) from None
    finally:
        con.close()
    present = {row[0] for row in found}
    return [s for s in wanted if s not in present], current


def check_store_subjects(store: Path, subject_ids: Iterable[int]) -> int:
    """Fail when the store holds none of the questions' patients; warn when it lacks some, and when its event
    index or row instants were written by an older definition of when rows become known (episodes then read those
    tables with the policy's joins: the same rows, about twice the CPU, until ``clinseek data ingest`` rewrites them).

    Returns:
        How many distinct subject_ids are missing (their rows will be ``infra_error`` rows).

    Raises:
        ClinseekError: none of the subject_ids is in the store's ``hosp.patients`` (naming the store
            and a few missing ids): the benchmark was built from another store.
    """
    wanted = set(subject_ids)
    missing, current = _read(store, wanted)
    if not current:
        logger.warning(
            "%s: its event index or row instants were written by an older clinseek (another definition of when some "
            "tables' rows become known): episodes read those tables with the policy's joins (the same rows, slower); "
            "`clinseek data ingest --out %s` with the store's sources rewrites them in seconds", store, store)
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
