"""clinseek: agentic clinical evidence seeking over MIMIC-IV shaped EHRs.

Importing this package does nothing beyond defining names: no connections, no environment
reads, no model loading. See ``clinseek.schema`` (the table registry), ``clinseek.store``
(building and opening a store) and the ``clinseek`` command.
"""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    """``clinseek.__version__``, read from the installed metadata on first use (``importlib.metadata``
    is not imported by ``import clinseek``)."""
    if name != "__version__":
        raise AttributeError(f"module 'clinseek' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("clinseek")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
        found = "0.0.0+unknown"
    globals()["__version__"] = found
    return found
