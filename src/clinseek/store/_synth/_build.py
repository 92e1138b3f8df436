"""``synthesize``: build a complete synthetic store, chunk by chunk, atomically."""

from __future__ import annotations

import gc
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np

from ...errors import StoreError
from ...schema import Table, get_table, tables
from .._duck import StoreLimits, connect_store, init_store, record_table, table_ddl
from .._eventindex import write_event_index
from .._existing import existing_file
from ._context import Counters, Ctx
from ._cxr import cxr_tables, write_images
from ._dictionaries import caregiver_ids, d_hcpcs, d_items, d_labitems, icd_dictionaries, provider_ids, titles
from ._ed import ed_tables
from ._frame import Frame, frame_len
from ._hosp import (
    admissions,
    diagnoses_icd,
    drgcodes,
    hcpcsevents,
    omr,
    other_orders,
    patients,
    procedures_icd,
    services,
    transfers,
)
from ._icu import chartevents, datetimeevents, input_tables, outputevents, procedureevents
from ._ids import number_emar, number_poe
from ._labs import labevents, microbiologyevents
from ._meds import emar_detail, medication_tables, plan_medications
from ._notes import note_tables
from ._studies import plan_studies
from ._timeline import make_patient, make_timeline
from ._writer import insert

CHUNK = 250
"""Patients per generation chunk (fixed: the output depends on it, not on the machine)."""

DICOM_STUDIES = 12
"""How many CXR images also get a DICOM copy."""


@dataclass(frozen=True, slots=True)
class SynthReport:
    """What :func:`synthesize` built.

    Attributes:
        path: the store file.
        cxr_root: the folder holding the CXR images (``files/pNN/p<subject>/s<study>/<dicom_id>.jpg``).
        patients: number of patients.
        seed: the seed.
        rows: row count per qualified table name.
        images: number of JPG images written.
        dicoms: number of DICOM copies written.
        seconds: wall time.
    """

    path: Path
    cxr_root: Path
    patients: int
    seed: int
    rows: dict[str, int]
    images: int
    dicoms: int
    seconds: float


def synthesize(out: Path, *, patients: int, seed: int, progress: bool = False) -> SynthReport:
    """Build a synthetic MIMIC-IV-shaped store with every table of the schema registry.

    The store is written to ``out`` (a DuckDB file, same layout and metadata as an ingested store,
    ``store_info.kind = "synthetic"``) and the CXR images to ``<out stem>_cxr/`` beside it
    (``store_info.cxr_root``, relative to the store's folder). The same ``patients`` and ``seed``
    give identical table contents. Nothing half-written is left: the store is built under a
    temporary name and renamed when complete (an existing *synthetic* store at ``out`` and its
    image folder are replaced; anything else at ``out`` or ``<out stem>_cxr/`` is refused).

    Args:
        out: the store file to write.
        patients: number of patients (>= 1). Ids stay in MIMIC ranges up to 40,000 patients.
        seed: random seed.
        progress: show a progress bar (rich).

    Raises:
        StoreError: bad arguments; ``out`` exists and is not a synthetic store (a text file, an
            ingested store, another DuckDB database), or ``<out stem>_cxr/`` exists and is not
            that store's image folder; or the store cannot be written.
    """
    if patients < 1:
        raise StoreError(f"patients must be at least 1, got {patients}")
    started = time.perf_counter()
    out = Path(out)
    cxr_final = out.parent / f"{out.stem}_cxr"
    _check_replaceable(out, cxr_final)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    cxr_partial = out.parent / f"{out.stem}_cxr.partial"
    for path in (partial, partial.with_name(partial.name + ".wal"), cxr_partial):
        _remove(path)
    cxr_partial.mkdir()  # the image folder exists even when no patient has a CXR study (a few patients)
    gc_was_on = gc.isenabled()
    gc.disable()  # millions of short-lived objects, no cycles worth collecting: GC passes cost a third of the time
    try:
        rows, images, dicoms = _build(partial, cxr_partial, patients, seed, progress, cxr_final.name)
    except BaseException:
        for path in (partial, partial.with_name(partial.name + ".wal"), cxr_partial):
            _remove(path)
        raise
    finally:
        if gc_was_on:
            gc.enable()
    _remove(out)
    _remove(cxr_final)
    partial.rename(out)
    cxr_partial.rename(cxr_final)
    return SynthReport(out, cxr_final, patients, seed, rows, images, dicoms, time.perf_counter() - started)


def _check_replaceable(out: Path, cxr_final: Path) -> None:
    """Only an existing synthetic store (and its own image folder) may be replaced."""
    found = existing_file(out)
    if found.kind not in ("absent", "synthetic"):
        raise StoreError(f"{out}: is {found.what}; synthesize replaces only a synthetic store: give a new --out file")
    if cxr_final.exists() and found.cxr_root != cxr_final.name:
        raise StoreError(f"{cxr_final}: exists and is not the image folder of a synthetic store at {out}; "
                         "move it or give another --out")
    foreign = sorted(p.name for p in cxr_final.iterdir() if p.name != "files") if cxr_final.is_dir() else []
    if foreign:  # the image folder holds only files/: anything else is the user's, never deleted
        raise StoreError(f"{cxr_final}: holds {', '.join(foreign[:3])}, which synthesize did not write; "
                         "move them or give another --out")


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def _build(path: Path, cxr_root: Path, patients: int, seed: int, progress: bool, cxr_name: str) -> tuple[dict[str, int], int, int]:
    con = connect_store(path, read_only=False, limits=StoreLimits(memory_limit="1GB"))
    try:
        con.execute("SET enable_progress_bar = false")
        init_store(con, kind="synthetic", sources={"seed": str(seed), "patients": str(patients), "cxr_root": cxr_name,
                                                   "generator": "clinseek.store.synthesize"})
        for table in tables():
            con.execute(table_ddl(table))
        dx_titles = _dictionaries(con)
        root = np.random.default_rng(seed)
        providers = provider_ids(patients, root)
        caregivers = caregiver_ids(patients, root)
        _insert(con, "hosp.provider", {"provider_id": np.array(providers, dtype=object)})
        _insert(con, "icu.caregiver", {"caregiver_id": caregivers})
        stride = max(1, min(100, 9_000_000 // patients))
        offsets = root.integers(0, stride, patients)
        subject_ids = 10_000_000 + np.arange(patients, dtype=np.int64) * stride + offsets
        counters = Counters()
        images = dicoms = 0
        chunks = range(0, patients, CHUNK)
        for start in _progress(chunks, progress, patients):
            rng = np.random.default_rng([seed, start])
            ctx = Ctx(rng, counters, providers, caregivers, dx_titles[0], dx_titles[1])
            idx = range(start, min(start + CHUNK, patients))
            timelines = [make_timeline(make_patient(i, int(subject_ids[i]), rng), rng) for i in idx]
            n_img, n_dcm = _chunk(con, timelines, ctx, cxr_root, seed, max(0, DICOM_STUDIES - dicoms))
            images += n_img
            dicoms += n_dcm
        rows = {}
        for table in tables():
            count = con.execute(f"SELECT count(*) FROM {table.qualified}").fetchall()[0][0]
            record_table(con, table, row_count=int(count), source_version="clinseek synthetic")
            rows[table.qualified] = int(count)
        write_event_index(con)
        con.execute("CHECKPOINT")
    except duckdb.Error as err:
        raise StoreError(f"{path}: cannot write the synthetic store: {err}") from err
    finally:
        con.close()
    return rows, images, dicoms


def _progress(chunks: range, show: bool, total: int):  # type: ignore[no-untyped-def]
    if not show:
        yield from chunks
        return
    from rich.progress import Progress

    with Progress() as bar:
        task = bar.add_task("synthesizing patients", total=total)
        for start in chunks:
            yield start
            bar.update(task, completed=min(start + CHUNK, total))


def _dictionaries(con: duckdb.DuckDBPyConnection) -> tuple[dict[tuple[str, int], str], dict[tuple[str, int], str]]:
    icd = icd_dictionaries()
    for name, frame in icd.items():
        _insert(con, f"hosp.{name}", frame)
    _insert(con, "hosp.d_labitems", d_labitems())
    _insert(con, "icu.d_items", d_items())
    _insert(con, "hosp.d_hcpcs", d_hcpcs())
    return titles(icd["d_icd_diagnoses"]), titles(icd["d_icd_procedures"])


def _insert(con: duckdb.DuckDBPyConnection, name: str, frame: Frame) -> None:
    table: Table = get_table(name)
    insert(con, table, frame)


def _chunk(con: duckdb.DuckDBPyConnection, timelines: list, ctx: Ctx, cxr_root: Path, seed: int, dicom_left: int) -> tuple[int, int]:  # type: ignore[type-arg]
    out: dict[str, Frame] = {
        "hosp.patients": patients(timelines),
        "hosp.admissions": admissions(timelines, ctx),
        "hosp.transfers": transfers(timelines),
        "hosp.services": services(timelines),
        "hosp.diagnoses_icd": diagnoses_icd(timelines, ctx),
        "hosp.procedures_icd": procedures_icd(timelines, ctx),
        "hosp.drgcodes": drgcodes(timelines),
        "hosp.hcpcsevents": hcpcsevents(timelines),
        "hosp.omr": omr(timelines, ctx),
    }
    labs = labevents(timelines, ctx)
    labs["labevent_id"] = _running(ctx.counters, "labevent_id", frame_len(labs))
    out["hosp.labevents"] = labs
    micro = microbiologyevents(timelines, ctx)
    micro["microevent_id"] = _running(ctx.counters, "microevent_id", frame_len(micro))
    out["hosp.microbiologyevents"] = micro
    plans = {a.hadm_id: plan_medications(tl, a, ctx) for tl in timelines for a in tl.admissions}
    ctx.plans = plans
    meds = medication_tables(timelines, plans, ctx)
    studies = plan_studies(timelines, ctx)
    study_frame = _study_frame(studies)
    poe, poe_detail = other_orders(timelines, labs, study_frame, ctx)
    out.update(number_poe(meds, poe, poe_detail))
    emar = number_emar(out.pop("emar"))
    out["hosp.emar_detail"] = emar_detail(emar) if frame_len(emar) else {}
    for key in ("dose", "unit", "route", "form"):
        emar.pop(key, None)
    out["hosp.emar"] = emar
    out["icu.chartevents"] = chartevents(timelines, ctx)
    out["icu.datetimeevents"] = datetimeevents(timelines, ctx)
    inputs, ingredients = input_tables(timelines, plans, ctx)
    out["icu.inputevents"], out["icu.ingredientevents"] = inputs, ingredients
    out["icu.outputevents"] = outputevents(timelines, ctx)
    out["icu.procedureevents"] = procedureevents(timelines, ctx)
    for name, frame in ed_tables(timelines, ctx).items():
        out[f"ed.{name}"] = frame
    for name, frame in note_tables(timelines, studies, ctx).items():
        out[f"note.{name}"] = frame
    cxr, images = cxr_tables(studies, ctx)
    sizes, dicoms = write_images(images, cxr_root, seed, dicom_left=dicom_left)
    meta = cxr["metadata"]
    if frame_len(meta):
        meta["Rows"] = np.array([sizes[d][0] for d in meta["dicom_id"]], dtype=np.int64)
        meta["Columns"] = np.array([sizes[d][1] for d in meta["dicom_id"]], dtype=np.int64)
    for name, frame in cxr.items():
        out[f"cxr.{name}"] = frame
    icu_stays = [(tl.patient.subject_id, a.hadm_id, s) for tl in timelines for a in tl.admissions for s in a.icu]
    out["icu.icustays"] = _icustays(icu_stays)
    con.execute("BEGIN TRANSACTION")
    for name, frame in out.items():
        _insert(con, name, frame)
    con.execute("COMMIT")
    return len(images), dicoms


def _running(counters: Counters, name: str, n: int) -> np.ndarray:
    first = getattr(counters, name)
    setattr(counters, name, first + n)
    return np.arange(first, first + n, dtype=np.int64)


def _study_frame(studies: list) -> Frame:  # type: ignore[type-arg]
    if not studies:
        return {}
    return {
        "subject_id": np.array([s.subject_id for s in studies], dtype=np.int64),
        "hadm_id": np.array([np.nan if s.hadm_id is None else s.hadm_id for s in studies], dtype=np.float64),
        "time": np.array([s.time for s in studies], dtype=np.float64),
        "exam": np.array([s.exam for s in studies], dtype=object),
    }


def _icustays(stays: list) -> Frame:  # type: ignore[type-arg]
    if not stays:
        return {}
    return {
        "subject_id": np.array([s for s, _, _ in stays], dtype=np.int64),
        "hadm_id": np.array([h for _, h, _ in stays], dtype=np.int64),
        "stay_id": np.array([st.stay_id for _, _, st in stays], dtype=np.int64),
        "first_careunit": np.array([st.careunit for _, _, st in stays], dtype=object),
        "last_careunit": np.array([st.careunit for _, _, st in stays], dtype=object),
        "intime": np.array([st.intime for _, _, st in stays], dtype=np.float64),
        "outtime": np.array([st.outtime for _, _, st in stays], dtype=np.float64),
        "los": np.array([(st.outtime - st.intime) / 86400.0 for _, _, st in stays], dtype=np.float64),
    }
