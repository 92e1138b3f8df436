"""The deny list: URL patterns of sources that could reveal the benchmark answer key."""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase
from urllib.parse import urlsplit

DEFAULT_DENY: tuple[str, ...] = (
    "huggingface.co/datasets/ucsc-vlaa/*",
    "huggingface.co/ucsc-vlaa/*",
    "huggingface.co/*clinseek*",
    "github.com/ucsc-vlaa/*",
    "*github.com/*clinseek*",
    "*githubusercontent.com/*clinseek*",
    "github.com/magic-ai4med/ehr-r1*",
    "huggingface.co/*ehr-r1*",
    "huggingface.co/*ehr-bench*",
    "github.com/baeseongsu/ehrxqa*",
    "github.com/nyuad-cai/medmod*",
    "physionet.org/files/*",
    "physionet.org/content/mimic*",
    "physionet.org/content/ehrxqa*",
    "physionet.org/static/published-projects/*",
)
"""Blocked by default: the ClinSeek-Bench release (Hugging Face, GitHub), the upstream task sources
whose files hold labels (EHR-R1 / EHR-Bench, EHRXQA, MedMod), and PhysioNet's file and project
pages, which serve the raw MIMIC data in which every patient's future is recorded. Patterns are
shell-style (``*``), matched case-insensitively against ``host/path`` without ``www.``; each
pattern also matches everything below it."""


class DenyList:
    """Decides whether a URL may be shown or fetched. Immutable."""

    def __init__(self, patterns: Iterable[str] = DEFAULT_DENY) -> None:
        self.patterns = tuple(p.lower().strip() for p in patterns if p.strip())

    def blocks(self, url: str) -> bool:
        """True when ``url`` (http, https or any scheme with a host) matches a pattern."""
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").removeprefix("www.")
        target = f"{host}{parts.path}".lower()
        return any(fnmatchcase(target, p) or fnmatchcase(target, p.rstrip("/*") + "/*") for p in self.patterns)
