"""The installed clinseek version (a leaf module: lower stages read it without importing the front door)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("clinseek")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+unknown"
