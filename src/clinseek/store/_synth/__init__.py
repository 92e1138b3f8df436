"""The synthetic MIMIC-IV-shaped store: coherent patient histories for every registry table.

One module per concern: clinical catalogue (``_conditions``, ``_drugs``, ``_items``),
dictionaries (``_dictionaries``), patient timelines (``_timeline``), hosp tables (``_hosp``,
``_labs``, ``_meds``, ``_ids``), ICU (``_icu``), ED (``_ed``), imaging and notes
(``_studies``, ``_notes``, ``_cxr``, ``_images``), the writer (``_writer``), the builder
(``_build``) and the whole-store checks (``_consistency``).
"""

from ._build import SynthReport, synthesize
from ._consistency import check_consistency

__all__ = ["SynthReport", "check_consistency", "synthesize"]
