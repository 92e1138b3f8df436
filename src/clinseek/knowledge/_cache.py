"""The on-disk cache of web searches and fetched pages: a run replays exactly with the network off."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from .._atomic import atomic_writer
from ..errors import ToolError

CacheMode = Literal["read_write", "replay", "off"]
"""``read_write``: serve hits, fetch and store misses; ``replay``: serve hits only, a miss is an
error and nothing touches the network; ``off``: no cache."""

TRANSIENT_KINDS = frozenset({"timeout", "backend"})
"""Error kinds that ``read_write`` retries instead of serving from the cache (``replay`` serves them)."""


class WebResponseCache:
    """JSON entries under ``directory/<backend>/<sha256 of key>.json``, written atomically.

    An entry holds the key and either a value or the model-visible error the call produced, so a
    replay reproduces failures (404, blocked redirects) as well as pages. Thread-safe.
    """

    def __init__(self, directory: Path | None, mode: CacheMode = "read_write") -> None:
        if directory is None and mode == "replay":
            raise ValueError("replay needs a cache directory")
        self.directory = directory
        self.mode: CacheMode = "off" if directory is None else mode
        self._lock = threading.Lock()
        self.counts = {"hits": 0, "misses": 0, "writes": 0}

    def _path(self, backend: str, key: str) -> Path:
        assert self.directory is not None
        return self.directory / backend / (hashlib.sha256(key.encode("utf-8")).hexdigest() + ".json")

    def _count(self, what: str) -> None:
        with self._lock:
            self.counts[what] += 1

    def _read(self, path: Path, key: str) -> dict[str, Any] | None:
        try:
            entry: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return entry if entry.get("key") == key else None

    def _write(self, path: Path, entry: dict[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(path) as fh:
            json.dump(entry, fh, ensure_ascii=False)
        self._count("writes")

    def call(self, backend: str, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()``'s JSON-able value for ``key``, from the cache when the mode allows.

        Raises:
            ToolError: the cached or computed error of this call, or ``not_cached`` on a replay miss.
        """
        if self.mode == "off":
            return compute()
        path = self._path(backend, key)
        entry = self._read(path, key)
        if entry is not None and (self.mode == "replay" or entry.get("error", {}).get("kind") not in TRANSIENT_KINDS):
            self._count("hits")
            if "error" in entry:
                raise ToolError(entry["error"]["kind"], entry["error"]["message"])
            return entry["value"]
        self._count("misses")
        if self.mode == "replay":
            raise ToolError("not_cached", f"{key.splitlines()[0]} {key.splitlines()[-1]!r} is not in the replay "
                                          "cache (this run replays a recorded cache with the network off)")
        try:
            value = compute()
        except ToolError as err:
            self._write(path, {"key": key, "error": {"kind": err.kind, "message": err.message}})
            raise
        self._write(path, {"key": key, "value": value})
        return value

    def entries(self) -> int:
        """Number of entries on disk (0 without a directory)."""
        if self.directory is None or not self.directory.exists():
            return 0
        return sum(1 for _ in self.directory.glob("*/*.json"))

    def describe(self) -> dict[str, Any]:
        """Path, mode, entries on disk and this process's hits / misses / writes (for the run manifest)."""
        with self._lock:
            counts = dict(self.counts)
        return {"path": str(self.directory) if self.directory else None, "mode": self.mode,
                "entries": self.entries(), **counts}
