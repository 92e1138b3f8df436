"""Defence in depth against credentials in run outputs.

Keys are read only by the model providers (from the environment or a user config file) and no
record carries them. As a second guard every line the runner writes passes through
:func:`redact_line`, which replaces the value of any credential-looking environment variable.
"""

from __future__ import annotations

import os

_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_SECRET_ACCESS_KEY", "_ACCESS_KEY_ID")
_MIN_LEN = 8  # shorter values would redact ordinary words


def secret_values() -> list[str]:
    """Values of environment variables whose names look like credentials, longest first."""
    values = {
        value
        for name, value in os.environ.items()
        if name.upper().endswith(_SUFFIXES) and len(value) >= _MIN_LEN
    }
    return sorted(values, key=len, reverse=True)


def redact_line(line: str, secrets: list[str] | None = None) -> str:
    """Replace every credential value in ``line`` with ``[redacted]``."""
    for value in secret_values() if secrets is None else secrets:
        if value in line:
            line = line.replace(value, "[redacted]")
    return line
