"""The records every stage shares, written by the runner and read by scoring, reporting and distill.

One shape per concept, versioned: :class:`Usage` (token counts of a call or a run), :class:`CallAttempt`,
:class:`CallRecord` and :class:`ToolRecord` (what happened in a run), :class:`ResultRow` (one line of
``results.jsonl``; ``schema_version`` 2, version-1 rows are upgraded when read) and :class:`RunManifest`
(``run_manifest.json``). Rows in the reference's layout are read through the one reference adapter
(``clinseek.refformat``). This package sits low in the layers: it depends on ``refformat`` only.
"""

from ._calls import CallAttempt, CallRecord, ToolCallSource, ToolRecord
from ._manifest import RunManifest, read_run_manifest
from ._read import ReadReport, decode_row, read_results
from ._row import SCHEMA_VERSION, Mode, ResultRow, Status
from ._usage import Usage

__all__ = [
    "SCHEMA_VERSION",
    "CallAttempt",
    "CallRecord",
    "Mode",
    "ReadReport",
    "ResultRow",
    "RunManifest",
    "Status",
    "ToolCallSource",
    "ToolRecord",
    "Usage",
    "decode_row",
    "read_results",
    "read_run_manifest",
]
