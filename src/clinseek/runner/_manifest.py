"""The run manifest (``run_manifest.json``) and the run-configuration hash that keys resume."""

from __future__ import annotations

import hashlib
import json
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from ..models import safe_url
from ..records import RunManifest
from ._secrets import redact_line


def config_hash(config: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of ``config`` (the run settings that change answers)."""
    blob = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def safe_base_url(url: str | None) -> str | None:
    """``url`` without user-info, query or fragment (they can carry credentials)."""
    return None if url is None else safe_url(url)


def git_commit(start: Path | None = None) -> str | None:
    """The HEAD commit of the git checkout holding this package (``None`` when not a checkout)."""
    here = start or Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def package_versions(names: tuple[str, ...] = ("clinseek", "aiohttp", "openai", "anthropic", "duckdb", "pydantic")) -> dict[str, str]:
    """Installed versions of the packages that shape a run."""
    found: dict[str, str] = {}
    for name in names:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def write_manifest(path: Path, manifest: RunManifest) -> None:
    """Write ``manifest`` atomically (redacted like every runner output)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(redact_line(manifest.model_dump_json(indent=2)) + "\n", encoding="utf-8")
    tmp.replace(path)
