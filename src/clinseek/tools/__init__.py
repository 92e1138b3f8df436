"""The tool layer: a decorator registry, typed results, limits, compact rendering, the SQL guard,
and the 16 EHR tools (``ehr.*``) that read one sealed episode.

Tool names and arguments follow the reference ClinSeekAgent (``ehr.load_ehr``,
``ehr.run_sql_query``, ...); the behaviour does not: the episode is pinned, outputs are typed,
compact and capped with a notice, keyword search is literal, SQL is parsed and guarded, and
errors come back as structured results (:class:`ToolResult` with ``error_kind``).
"""

from . import _browser, _ehr_candidates, _ehr_control, _ehr_meta, _ehr_records, _ehr_sql, _image  # noqa: F401  (register)
from ._browser_state import PageBrowser, PageBrowserLimits, attach_browser
from ._call import call_tool, call_tools
from ._context import ToolContext
from ._ehr_candidates import EHR_SEMANTIC_TOOL, available_tools, load_encoder, semantic_available
from ._image_state import attach_imaging
from ._limits import Limits
from ._registry import DEFAULT_REGISTRY, ToolRegistry, ToolSpec, get_tool, tool, tool_names, tool_schemas
from ._render import Rows, format_value, render_rows, strip_ansi
from ._result import ToolResult
from ._sqlguard import guard_sql

EHR_TOOLS: tuple[str, ...] = (
    "ehr.load_ehr",
    "ehr.get_table_names",
    "ehr.get_column_names",
    "ehr.get_table_description",
    "ehr.get_unique_values",
    "ehr.get_records_by_time",
    "ehr.get_event_counts_by_time",
    "ehr.get_latest_records",
    "ehr.get_records_by_keyword",
    "ehr.get_records_by_value",
    "ehr.run_sql_query",
    "ehr.get_candidates_by_keyword",
    "ehr.get_candidates_by_fuzzy_matching",
    "ehr.get_candidates_by_semantic_similarity",
    "ehr.think",
    "ehr.finish",
)
"""The 16 EHR tool names, in the reference's order (the order of their schemas)."""

BROWSER_TOOLS: tuple[str, ...] = ("browser.search", "browser.open", "browser.find")
"""The 3 knowledge tools, in the reference's order; they need :func:`attach_browser` on the context."""

IMAGE_TOOLS: tuple[str, ...] = (
    "image.dicom_processor",
    "image.chest_xray_classifier",
    "image.chest_xray_report_generator",
    "image.xray_phrase_grounding",
    "image.chest_xray_segmentation",
    "image.image_visualizer",
)
"""The 6 imaging tools; they need :func:`attach_imaging` on the context (the episode's linked CXR images)."""

__all__ = [
    "BROWSER_TOOLS",
    "DEFAULT_REGISTRY",
    "EHR_SEMANTIC_TOOL",
    "EHR_TOOLS",
    "IMAGE_TOOLS",
    "Limits",
    "PageBrowser",
    "PageBrowserLimits",
    "Rows",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "attach_browser",
    "attach_imaging",
    "available_tools",
    "call_tool",
    "call_tools",
    "format_value",
    "get_tool",
    "guard_sql",
    "load_encoder",
    "render_rows",
    "semantic_available",
    "strip_ansi",
    "tool",
    "tool_names",
    "tool_schemas",
]
