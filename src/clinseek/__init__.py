"""clinseek: agentic clinical evidence seeking over MIMIC-IV shaped EHRs.

Importing this package does nothing beyond defining names: no connections, no environment
reads, no model loading. See ``clinseek.schema`` (the table registry), ``clinseek.store``
(building and opening a store) and the ``clinseek`` command.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("clinseek")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
