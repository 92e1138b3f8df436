"""The prompt version recorded with every result must change whenever the prompt text changes.

Results, resume keys and distilled training data are tied to ``PROMPT_VERSION``; two different
texts under one version would make runs look comparable when they are not. When this test fails
after an intended prompt edit: bump ``PROMPT_VERSION`` in ``clinseek/agent/_prompts.py`` and add
the new version with the printed digest below.
"""

from __future__ import annotations

import hashlib

from clinseek.agent import _prompts

PROMPT_DIGESTS = {
    "clinseek-prompts-v3": "307364c007ba57720c3141b1582ccffb3e61e8150aaa76a01c814ac856cd2577",
    "clinseek-prompts-v4": "307364c007ba57720c3141b1582ccffb3e61e8150aaa76a01c814ac856cd2577",  # AgentEHR role text
}


def _prompt_text_digest() -> str:
    texts = sorted(
        (name, value)
        for name, value in vars(_prompts).items()
        if name.isupper() and isinstance(value, str) and name != "PROMPT_VERSION"
    )
    blob = "\n\x00".join(f"{name}={value}" for name, value in texts)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def test_prompt_text_matches_its_version() -> None:
    digest = _prompt_text_digest()
    version = _prompts.PROMPT_VERSION
    assert version in PROMPT_DIGESTS, f"new prompt version {version}: add it with digest {digest}"
    assert PROMPT_DIGESTS[version] == digest, (
        f"the prompt text changed but PROMPT_VERSION is still {version}: bump it and record digest {digest}"
    )
