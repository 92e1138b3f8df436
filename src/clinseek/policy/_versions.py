"""The policy version names (the strings manifests, results and run manifests record)."""

from __future__ import annotations

TEXT_POLICY = "clinseek-text-v1"
"""ClinSeek-Bench text: a row is visible iff its event time is strictly before ``prediction_time``
(the benchmark sets ``prediction_time`` = last event + 1 s)."""

MM_POLICY = "multimodal-strict-temporal-scope-v1"
"""ClinSeek-Bench multimodal: a row is visible iff its event time is at or before ``prediction_time``
(the manifests' ``time_policy: inclusive_leq_cutoff``), and only the question's linked CXR studies
exist (``cxr_policy: linked_studies_only``)."""

POLICY_VERSIONS: tuple[str, ...] = (TEXT_POLICY, MM_POLICY)
"""Every known policy version, in the order they were introduced."""
