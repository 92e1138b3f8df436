"""``clinseek data ...``: build and inspect stores."""

from __future__ import annotations

from ._app import data_app  # noqa: F401
