"""Keep the garbage collector off the objects that existed before a run, for the run's duration."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def frozen_heap() -> Iterator[bool]:
    """Move every object alive now to the collector's permanent generation until the block ends.

    A run allocates objects that live as long as a model call (a second or more), so they reach
    the oldest generation and trigger its full collections; each one traverses the whole heap (the
    imported libraries: ~150,000 objects), pausing the event loop ~0.1 s while up to
    ``concurrency`` replies wait. Frozen, the pre-run heap is skipped and a full collection costs
    only the run's own objects (``gc.freeze``, Python docs). The block's end unfreezes them, so
    garbage from before the run is collected as usual afterwards. A heap that is already frozen
    (the caller manages it, e.g. before forking) is left alone.

    Yields:
        Whether this block froze the heap.
    """
    if gc.get_freeze_count():
        yield False
        return
    gc.freeze()
    try:
        yield True
    finally:
        gc.unfreeze()
