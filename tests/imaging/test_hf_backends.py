"""The Hugging Face report generator through its real loading code: a tiny random ViT-BERT
``VisionEncoderDecoderModel`` saved with ``save_pretrained`` in the two expected folders (skipped without
torch and transformers, the [imaging] extra). MAIRA-2 needs its own remote code: only its
"weights absent" path is tested (test_image_tools.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinseek.imaging import ImagingConfig, load_backend, load_image


@pytest.fixture(autouse=True, scope="module")
def _imaging_extra() -> None:
    """torch and transformers are imported when these tests run, not when they are collected."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")


_WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "no", "acute", "effusion", "left", "small", "."]


def _save_tiny(folder: Path) -> None:
    import torch
    import transformers

    folder.mkdir(parents=True)
    (folder / "vocab.txt").write_text("\n".join(_WORDS) + "\n")
    tokenizer = transformers.BertTokenizer(str(folder / "vocab.txt"))
    encoder = transformers.ViTConfig(image_size=32, patch_size=16, hidden_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=37)
    decoder = transformers.BertConfig(vocab_size=len(_WORDS), hidden_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, intermediate_size=37, is_decoder=True,
                                      add_cross_attention=True)
    config = transformers.VisionEncoderDecoderConfig.from_encoder_decoder_configs(encoder, decoder)
    config.decoder_start_token_id = tokenizer.cls_token_id
    config.pad_token_id = tokenizer.pad_token_id
    config.eos_token_id = tokenizer.sep_token_id
    torch.manual_seed(0)
    model = transformers.VisionEncoderDecoderModel(config=config)
    model.generation_config.decoder_start_token_id = tokenizer.cls_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.sep_token_id
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    transformers.ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)


def test_report_generator_loads_local_folders_and_writes_text(tmp_path: Path, nih_pngs: list[Path]) -> None:
    from clinseek.imaging._hf import FINDINGS_DIR, IMPRESSION_DIR

    for name in (FINDINGS_DIR, IMPRESSION_DIR):
        _save_tiny(tmp_path / name)
    model = load_backend("report_generator", ImagingConfig(weights_dir=tmp_path))
    report = model.generate(load_image(nih_pngs[0]))
    assert isinstance(report.findings, str) and isinstance(report.impression, str)
    assert set(report.findings.replace(".", " .").split()) <= set(_WORDS)
