"""Imaging timings: reading real films, the weight-free tools, and (with torch) the torchxrayvision models.

Prints, for pydicom-data's RG1 PA film (1955x1841 DICOM) and the NIH ChestX-ray14 PNGs (1024 px):
``load_image`` and ``fit_for_model`` p50/p95 ms; for a multimodal episode of a synthetic store:
the imaging session's set-up and ``image.dicom_processor`` / ``image.image_visualizer`` through
``call_tool`` (worker thread included); with torch and torchxrayvision installed, first load and
per-image inference of the DenseNet classifier and the PSPNet segmenter with random stand-in
weights (the same compute as the real ones).

Run: ``.venv/bin/python benchmarks/imaging.py [--nih DIR] [--patients 40] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from clinseek.imaging import (
    CxrLocator,
    ImagingConfig,
    fit_for_model,
    load_backend,
    load_image,
    store_cxr_root,
)


def _ms(fn: Callable[[], Any], repeats: int) -> tuple[float, float]:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(0.95 * len(times)))]


def _films(nih: Path) -> list[Path]:
    from pydicom.data import get_testdata_file

    rg1 = get_testdata_file("RG1_UNCR.dcm")
    return ([Path(rg1)] if rg1 else []) + sorted(nih.glob("*.png"))[:2]


def bench_pixels(films: list[Path], repeats: int, tmp: Path) -> None:
    for film in films:
        p50, p95 = _ms(lambda f=film: load_image(f), repeats)
        f50, f95 = _ms(lambda f=film: fit_for_model(f, tmp / "fit"), repeats)
        print(f"{film.name:24s} load_image p50 {p50:7.1f} ms p95 {p95:7.1f} | fit_for_model p50 {f50:6.1f} ms p95 {f95:6.1f}")


def bench_tools(patients: int, repeats: int, tmp: Path) -> None:
    from clinseek.episode import MM_POLICY, EpisodeKey, build_episode
    from clinseek.schema import STUDY_TIME_SQL
    from clinseek.store import open_store, synthesize
    from clinseek.tools import ToolContext, attach_imaging, call_tool

    store = tmp / "synthetic.duckdb"
    synthesize(out=store, patients=patients, seed=7, progress=False)
    with open_store(store).connect() as con:
        sid, study, t, dicoms = con.execute(
            f"SELECT subject_id, study_id, min({STUDY_TIME_SQL}), list(dicom_id) FROM cxr.metadata t "
            "GROUP BY ALL ORDER BY 1, 3 LIMIT 1").fetchall()[0]
    key = EpisodeKey(sid, t, MM_POLICY, study_ids=(study,), dicom_ids=tuple(dicoms))
    root = store_cxr_root(store)
    assert root is not None
    with build_episode(store, key) as episode:
        ctx = ToolContext(episode=episode)
        s50, s95 = _ms(lambda: attach_imaging(ctx, CxrLocator((root,)), artifact_dir=tmp / "art"), repeats)
        print(f"imaging session set-up ({len(dicoms)} linked images): p50 {s50:.1f} ms p95 {s95:.1f}")
        for name, args in [("image.dicom_processor", {"dicom_path": dicoms[0]}),
                           ("image.image_visualizer", {"image_path": dicoms[0], "title": "PA"})]:
            p50, p95 = _ms(lambda n=name, a=args: anyio.run(lambda: call_tool(ctx, n, a)), repeats)
            print(f"{name:28s} p50 {p50:7.1f} ms p95 {p95:7.1f}")


def bench_models(films: list[Path], tmp: Path) -> None:
    try:
        import torch
        import torchxrayvision as xrv
        from torchxrayvision.baseline_models.chestx_det.ptsemseg.pspnet import pspnet
    except ImportError:
        print("models: torch/torchxrayvision not installed (the [imaging] extra); skipped")
        return
    from clinseek.imaging import DENSENET_FILE, PSPNET_FILE, PSPNET_STRUCTURES, XRV_DIR

    folder = tmp / "weights" / XRV_DIR
    folder.mkdir(parents=True)
    torch.save(xrv.models.DenseNet(weights=None), folder / DENSENET_FILE)
    torch.save({f"module.{k}": v for k, v in pspnet(len(PSPNET_STRUCTURES)).state_dict().items()}, folder / PSPNET_FILE)
    config = ImagingConfig(weights_dir=tmp / "weights")
    image = load_image(films[0])
    for kind, run in [("classifier", lambda m: m.classify(image)), ("segmenter", lambda m: m.segment(image))]:
        started = time.perf_counter()
        model = load_backend(kind, config)  # type: ignore[arg-type]
        loaded = time.perf_counter() - started
        p50, p95 = _ms(lambda m=model, r=run: r(m), 3)
        print(f"{kind:11s} load {loaded:6.2f} s | inference p50 {p50:8.1f} ms p95 {p95:8.1f} "
              f"({torch.get_num_threads()} threads, {config.device})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nih", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data/cxr/nih-chestxray14/images")
    parser.add_argument("--patients", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        films = _films(args.nih)
        bench_pixels(films, args.repeats, tmp)
        bench_tools(args.patients, args.repeats, tmp)
        bench_models(films, tmp)


if __name__ == "__main__":
    main()
