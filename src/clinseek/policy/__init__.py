"""The temporal/scope policy: which rows and which column values an episode may see.

One :class:`Policy` per version (:data:`TEXT_POLICY`, :data:`MM_POLICY`), driven entirely by the
schema registry (event times, inherited parent times, masks, target-encounter keys, visibility).
It produces SQL for a store connection: :meth:`Policy.visible_select` (what an episode sees) and
:meth:`Policy.future_select` (the inverse, for label building). POLICY.md and ``docs/policy.md``
state the rules table by table.
"""

from ._doc import policy_markdown
from ._key import EpisodeKey
from ._policy import POLICIES, Policy, get_policy
from ._versions import MM_POLICY, POLICY_VERSIONS, TEXT_POLICY

__all__ = [
    "MM_POLICY",
    "POLICIES",
    "POLICY_VERSIONS",
    "TEXT_POLICY",
    "EpisodeKey",
    "Policy",
    "get_policy",
    "policy_markdown",
]
