"""Imports every command module so that its commands register on the app.

Add one line per command module; keep each module to one concern (data, bench, run, score, ...).
"""

from __future__ import annotations

from . import (
    _bench,  # noqa: F401
    _catalog,  # noqa: F401
    _data,  # noqa: F401
    _demo,  # noqa: F401
    _distill,  # noqa: F401
    _export,  # noqa: F401
    _inspect,  # noqa: F401
    _knowledge,  # noqa: F401
    _mcp,  # noqa: F401
    _report,  # noqa: F401
    _run,  # noqa: F401
    _score,  # noqa: F401
    _tool,  # noqa: F401
)
