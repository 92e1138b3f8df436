"""The HTML report and trajectory viewer: one self-contained file from one or more scored runs.

``write_report(dirs, out)`` reads each folder's ``summary.json`` and ``per_question.jsonl`` (or
scores its ``results.jsonl`` files on the fly), streams the trajectories of ``results.jsonl``, and
writes a page with the paper-style headline table (Curated Input vs ClinSeekAgent, Δ with its
paired 95 % CI), inline-SVG figures, a question browser whose trajectories are decoded only when
opened, and the run manifests. ``clinseek report DIR... --out report.html`` calls it.
"""

from ._assets_store import THUMBNAIL_PX, ImageTable, SharedTexts, encode_thumbnail
from ._blobs import BLOB_TYPE, blob_element, decode_blob, encode_blob, json_for_html
from ._browser import OUTCOMES, TrajectoryIndex, build_index, outcome, write_trajectories
from ._inputs import ReportInputs, ReportSource, load_inputs, load_source, read_manifest, read_question_scores
from ._plots import MODE_COLORS, tool_family
from ._trajectory import row_payload, trajectory_steps
from ._write import ReportStats, build_report, write_report

__all__ = [
    "BLOB_TYPE",
    "MODE_COLORS",
    "OUTCOMES",
    "THUMBNAIL_PX",
    "ImageTable",
    "ReportInputs",
    "ReportSource",
    "ReportStats",
    "SharedTexts",
    "TrajectoryIndex",
    "blob_element",
    "build_index",
    "build_report",
    "decode_blob",
    "encode_blob",
    "encode_thumbnail",
    "json_for_html",
    "load_inputs",
    "load_source",
    "outcome",
    "read_manifest",
    "read_question_scores",
    "row_payload",
    "tool_family",
    "trajectory_steps",
    "write_report",
    "write_trajectories",
]
