"""Hugging Face backends loaded from local folders only (``local_files_only=True``; never the hub).

* ``hf-vit-bert`` report generator: two ``VisionEncoderDecoderModel`` folders (ViT encoder, BERT
  decoder), ``<weights_dir>/chexpert-mimic-cxr-findings-baseline/`` and
  ``<weights_dir>/chexpert-mimic-cxr-impression-baseline/`` (the IAMJB baselines the reference
  uses), each with its tokenizer and image processor; greedy decoding, at most 128 tokens.
* ``hf-maira2`` phrase grounding: ``<weights_dir>/maira-2/`` (microsoft/maira-2, custom code,
  ``trust_remote_code``); boxes come back as fractions of the image.

Source: reference ``ref_agent_tools.md`` §5 items 4-5.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from ..errors import MissingExtraError, import_optional, install_hint
from ._backend import (
    BackendUnavailable,
    GeneratedReport,
    Grounding,
    ImagingConfig,
    register_backend,
    weights_file,
)
from ._pixels import CxrImage

FINDINGS_DIR = "chexpert-mimic-cxr-findings-baseline"
IMPRESSION_DIR = "chexpert-mimic-cxr-impression-baseline"
MAIRA_DIR = "maira-2"
_INSTALL = f"{install_hint('imaging')} (torch, transformers)"


def _import(kind: str, backend: str) -> tuple[Any, Any]:
    try:
        return import_optional("torch", kind, "imaging"), import_optional("transformers", kind, "imaging")
    except MissingExtraError as err:
        raise BackendUnavailable(kind, backend, _INSTALL if err.module_absent else str(err)) from err


def _model_dir(config: ImagingConfig, kind: str, backend: str, name: str, hub_id: str) -> Path:
    folder = weights_file(config, kind, backend, name,
                          f"{_INSTALL} and save the Hugging Face model {hub_id} (model, tokenizer, processor)")
    if not (folder / "config.json").is_file():
        raise BackendUnavailable(kind, backend, f"{folder} holds no config.json: save {hub_id} there "
                                 "(huggingface-cli download or save_pretrained)")
    return folder


class _EncoderDecoder:
    """One ViT-BERT captioner loaded from a local folder."""

    def __init__(self, torch: Any, transformers: Any, folder: Path, device: str) -> None:
        self.torch = torch
        self.device = device
        self.model = transformers.VisionEncoderDecoderModel.from_pretrained(folder, local_files_only=True).to(device).eval()
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
        self.processor = transformers.AutoImageProcessor.from_pretrained(folder, local_files_only=True)

    def __call__(self, image: CxrImage) -> str:
        rgb = Image.fromarray(image.pixels).convert("RGB")
        pixel_values = self.processor(images=rgb, return_tensors="pt").pixel_values.to(self.device)
        with self.torch.inference_mode():
            ids = self.model.generate(pixel_values, max_length=128, num_beams=1, do_sample=False)
        return str(self.tokenizer.decode(ids[0], skip_special_tokens=True)).strip()


class HfReportGenerator:
    """``image.chest_xray_report_generator`` backend: findings and impression ViT-BERT models."""

    def __init__(self, config: ImagingConfig) -> None:
        findings = _model_dir(config, "report_generator", "hf-vit-bert", FINDINGS_DIR, f"IAMJB/{FINDINGS_DIR}")
        impression = _model_dir(config, "report_generator", "hf-vit-bert", IMPRESSION_DIR, f"IAMJB/{IMPRESSION_DIR}")
        torch, transformers = _import("report_generator", "hf-vit-bert")
        self._findings = _EncoderDecoder(torch, transformers, findings, config.device)
        self._impression = _EncoderDecoder(torch, transformers, impression, config.device)
        self._lock = threading.Lock()

    def generate(self, image: CxrImage) -> GeneratedReport:
        """FINDINGS and IMPRESSION, each from its own model."""
        with self._lock:
            return GeneratedReport(self._findings(image), self._impression(image))


class HfMaira2:
    """``image.xray_phrase_grounding`` backend: MAIRA-2 phrase grounding from a local folder."""

    def __init__(self, config: ImagingConfig) -> None:
        folder = _model_dir(config, "grounder", "hf-maira2", MAIRA_DIR, "microsoft/maira-2")
        torch, transformers = _import("grounder", "hf-maira2")
        self._torch = torch
        self._device = config.device
        dtype = torch.bfloat16 if config.device.startswith("cuda") else torch.float32
        self._model = transformers.AutoModelForCausalLM.from_pretrained(
            folder, trust_remote_code=True, local_files_only=True, torch_dtype=dtype).to(config.device).eval()
        self._processor = transformers.AutoProcessor.from_pretrained(folder, trust_remote_code=True, local_files_only=True)
        self._lock = threading.Lock()

    def ground(self, image: CxrImage, phrase: str) -> Grounding:
        """Boxes for ``phrase`` as fractions of the image (MAIRA-2's processor converts them)."""
        rgb = Image.fromarray(image.pixels).convert("RGB")
        inputs = self._processor.format_and_preprocess_phrase_grounding_input(
            frontal_image=rgb, phrase=phrase, return_tensors="pt").to(self._device)
        with self._lock, self._torch.inference_mode():
            out = self._model.generate(**inputs, max_new_tokens=150, use_cache=True)
        prompt_len = inputs["input_ids"].shape[-1]
        decoded = self._processor.decode(out[0][prompt_len:], skip_special_tokens=True).lstrip()
        parsed = self._processor.convert_output_to_plaintext_or_grounded_sequence(decoded)
        boxes: list[tuple[float, float, float, float]] = []
        for _, found in parsed if isinstance(parsed, list) else []:
            for box in found or []:
                x1, y1, x2, y2 = (float(v) for v in self._processor.adjust_box_for_original_image_size(
                    box, width=rgb.width, height=rgb.height))
                boxes.append((x1, y1, x2, y2))
        return Grounding(phrase, tuple(_clip(boxes)))


def _clip(boxes: list[tuple[float, float, float, float]]) -> list[tuple[float, float, float, float]]:
    return [(_unit(a), _unit(b), _unit(c), _unit(d)) for a, b, c, d in boxes]


def _unit(v: float) -> float:
    return float(np.clip(v, 0.0, 1.0))


register_backend("report_generator", "hf-vit-bert", HfReportGenerator)
register_backend("grounder", "hf-maira2", HfMaira2)
