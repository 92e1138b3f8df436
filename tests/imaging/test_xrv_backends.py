"""torchxrayvision backends through their real loading code, with randomly initialised stand-in weights
saved in the release file formats (torch and torchxrayvision are in the [imaging] extra: skipped without them).

Real-weight checks run when ``CLINSEEK_IMAGING_WEIGHTS`` names a folder holding the real release files.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from clinseek.imaging import (
    DENSENET_FILE,
    PSPNET_FILE,
    PSPNET_STRUCTURES,
    XRV_DIR,
    XRV_PATHOLOGIES,
    ImagingConfig,
    load_backend,
    load_image,
)


@pytest.fixture(autouse=True, scope="module")
def _imaging_extra() -> None:
    """torch and torchxrayvision are imported when these tests run, not when they are collected."""
    pytest.importorskip("torch")
    pytest.importorskip("torchxrayvision")


@pytest.fixture(scope="module")
def stand_in_weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A weights folder with random DenseNet and PSPNet weights in the release formats."""
    import torch
    import torchxrayvision as xrv
    from torchxrayvision.baseline_models.chestx_det.ptsemseg.pspnet import pspnet

    root = tmp_path_factory.mktemp("weights")
    folder = root / XRV_DIR
    folder.mkdir()
    torch.manual_seed(0)
    torch.save(xrv.models.DenseNet(weights=None), folder / DENSENET_FILE)  # the release pickles the whole model
    state = {f"module.{k}": v for k, v in pspnet(len(PSPNET_STRUCTURES)).state_dict().items()}  # DataParallel keys
    torch.save(state, folder / PSPNET_FILE)
    return root


def test_classifier_loads_and_scores_18_pathologies_on_real_films(stand_in_weights: Path, rg1: Path,
                                                                  nih_pngs: list[Path]) -> None:
    model = load_backend("classifier", ImagingConfig(weights_dir=stand_in_weights))
    assert model.labels == XRV_PATHOLOGIES
    for path in [rg1, nih_pngs[0]]:
        scores = model.classify(load_image(path))
        assert tuple(scores) == XRV_PATHOLOGIES and all(0.0 <= p <= 1.0 for p in scores.values())
    assert load_backend("classifier", ImagingConfig(weights_dir=stand_in_weights)) is model  # loaded once


def test_segmenter_loads_and_masks_14_structures_in_the_image_grid(stand_in_weights: Path, nih_pngs: list[Path]) -> None:
    model = load_backend("segmenter", ImagingConfig(weights_dir=stand_in_weights))
    assert model.structures == PSPNET_STRUCTURES
    image = load_image(nih_pngs[1])
    masks = model.segment(image)
    assert tuple(masks) == PSPNET_STRUCTURES
    assert all(m.shape == image.shape and m.dtype == np.bool_ for m in masks.values())


@pytest.mark.skipif(not os.environ.get("CLINSEEK_IMAGING_WEIGHTS"), reason="real torchxrayvision weights not configured (set CLINSEEK_IMAGING_WEIGHTS; docs/imaging.md)")
def test_real_densenet_finds_effusion_higher_on_an_effusion_film(nih_pngs: list[Path]) -> None:
    config = ImagingConfig(weights_dir=Path(os.environ["CLINSEEK_IMAGING_WEIGHTS"]))
    model = load_backend("classifier", config)
    by_name = {p.name: p for p in nih_pngs}
    effusion = model.classify(load_image(by_name["00000013_021.png"]))["Effusion"]
    normal = model.classify(load_image(by_name["00000013_019.png"]))["Effusion"]
    assert effusion > normal
