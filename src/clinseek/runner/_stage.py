"""``--stage-store``: a copy of the store shipped to every node that runs a Ray worker.

The driver reads the store file in chunks and puts them in Ray's object store once; the first
worker on each node writes them to a node-local folder (a file lock keeps the other workers of
that node waiting, then they reuse the copy), checks its size and its :func:`store_identity`, and
opens that copy. Cost: the whole file in the driver's object store (spilled to its disk when larger
than the store's memory) for the run, sent once over the network to each node and written once to
each node's disk (docs/ray.md, "Store access").
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ClinseekError, StoreError
from ._identity import store_identity

CHUNK_BYTES = 64 * 1024 * 1024
"""Size of one object of a staged store (small enough to stream, large enough to be few)."""


@dataclass(frozen=True, slots=True)
class StagedStore:
    """A store file put in Ray's object store in chunks (``chunks`` are ``ray.ObjectRef``)."""

    name: str
    size: int
    store_id: str
    chunks: Sequence[Any]


def stage_chunks(store: Path, put: Callable[[bytes], Any], chunk_bytes: int = CHUNK_BYTES) -> tuple[int, list[Any]]:
    """``(size, [put(chunk), ...])`` of the file ``store`` read in ``chunk_bytes`` pieces."""
    refs: list[Any] = []
    size = 0
    with store.open("rb") as handle:
        while chunk := handle.read(chunk_bytes):
            refs.append(put(chunk))
            size += len(chunk)
    return size, refs


def stage_root() -> Path:
    """The node-local folder of staged stores (``$CLINSEEK_STAGE_DIR``, else the temporary folder)."""
    return Path(os.environ.get("CLINSEEK_STAGE_DIR") or Path(tempfile.gettempdir()) / "clinseek-staged")


async def materialize(staged: StagedStore, fetch: Callable[[Any], Awaitable[bytes]], root: Path | None = None) -> Path:
    """The node-local copy of ``staged``, written from its chunks unless a checked copy is there.

    Raises:
        StoreError: the copy on this node does not have the staged size or identity (a full disk, a
            file changed while it was staged).
    """
    folder = (root or stage_root()) / staged.store_id[:16]
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / staged.name
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one writer per node; the others wait, then find the copy
        try:
            if not (target.is_file() and target.stat().st_size == staged.size):
                partial = target.with_name(target.name + f".{os.getpid()}.part")
                with partial.open("wb") as out:
                    for ref in staged.chunks:
                        out.write(await fetch(ref))
                os.replace(partial, target)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    if target.stat().st_size != staged.size or store_identity(target) != staged.store_id:
        raise StoreError(f"{target}: the staged copy of {staged.name} is not the driver's store (size or identity "
                         "differs); remove the folder and rerun")
    return target


def check_worker_store(store: Path, expected: str | None, node: str) -> None:
    """Check that the store a worker will read is the driver's.

    Raises:
        ClinseekError: no such file on the worker's node, or another store there (another identity).
    """
    if expected is None:
        return
    if not store.is_file():
        raise ClinseekError(f"{store}: no such store file on Ray node {node}; put the store on a filesystem every "
                            "node mounts at the same path, or pass --stage-store (docs/ray.md)")
    found = store_identity(store)
    if found != expected:
        raise ClinseekError(f"{store} on Ray node {node} is another store than the driver's (identity "
                            f"{(found or '?')[:12]} != {expected[:12]}); every node must read the same store")
