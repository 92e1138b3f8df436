"""Where an episode's evidence beyond the EHR comes from: knowledge, images, candidate tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..imaging import ImagingConfig
from ..knowledge import Knowledge, KnowledgeConfig
from ..tools import PageBrowserLimits


@dataclass(frozen=True, slots=True)
class Sources:
    """Where evidence beyond the EHR comes from: knowledge, images, candidate tables.

    Attributes:
        knowledge: source of the browser tools (``browser.search``/``open``/``find``) offered in agent mode:
            a ``KnowledgeConfig`` (opened once per call in a worker thread; the offline index is cached
            under its ``cache_dir`` and gets the benchmark task definitions), an opened ``Knowledge``
            (shared as is, e.g. across calls), or ``None`` (no browser tools). The CLI defaults to the
            offline index; the Python default is ``None``.
        browser: per-episode budgets of the browser tools (calls, characters, view size).
        cxr_root: MIMIC-CXR root the questions' ``image_paths`` are relative to; existing images are
            attached by reference to the task turn and read by the ``image.*`` tools (``None`` = no images).
        max_images: images attached per question at most (the reference's cap).
        imaging: imaging model weights and device for the ``image.*`` tools; without weights the model
            tools return a structured error.
        candidate_tables: AgentEHR's ``candidate_table.db`` (or its data root) for AgentEHR-Bench questions
            without candidates (``None`` = each task's table is built from the store's dictionaries;
            ``clinseek.bench.question_candidates``).
    """

    knowledge: KnowledgeConfig | Knowledge | None = None
    browser: PageBrowserLimits = field(default_factory=PageBrowserLimits)
    cxr_root: Path | None = None
    max_images: int = 4
    imaging: ImagingConfig = field(default_factory=ImagingConfig)
    candidate_tables: Path | None = None
