"""Counting tokens: the server's own tokenizer where it has an endpoint, else a conservative estimate.

Budgets that must fit a model's context (the Curated Input package, the agent loop's compaction)
are in tokens. Character counts are a poor proxy: on dense numeric EHR timelines Qwen's tokenizer
gives about 2.2 characters per token, not the 4 of English prose (docs/models.md, "Token counts").

- :class:`ServerTokenCounter` asks the server (exact): llama.cpp ``llama-server``, vLLM and TGI
  ``POST /tokenize``, llama-cpp-python ``POST /extras/tokenize/count``; :func:`probe_token_counter`
  finds which one a server has.
- :func:`estimate_tokens` (:data:`ESTIMATE`) is a calibrated upper bound for everything else:
  every digit, punctuation mark and non-ASCII character one token, every run of letters one token
  per :data:`LETTERS_PER_TOKEN` letters (rounded up), every line break one token, and blanks before
  a digit or in runs of two or more one token. It was checked against the Qwen2.5 tokenizer on
  EHR-shaped texts and on the MIMIC-IV demo's curated packages (docs/models.md, "Token counts").
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ._messages import Message

logger = logging.getLogger("clinseek.models")

ESTIMATE_VERSION = "clinseek-token-estimate-v1"
"""Recorded with runs that budget by the estimate; bump when :func:`estimate_tokens` changes."""
LETTERS_PER_TOKEN = 3
"""Letters per token in :func:`estimate_tokens` (BPE vocabularies merge 3–6 letters of common words;
clinical terms split finer)."""
MESSAGE_OVERHEAD_TOKENS = 8
"""Tokens added per message for the chat template's role markers and separators."""

_LONE_SPACES = re.compile(r"[ \t]+(?=[0-9])|[ \t]{2,}(?![ \t]*[0-9])")
"""Blanks that are tokens of their own: before a digit (digits are split from what precedes them),
and runs of two or more (column alignment)."""


def _byte_class(i: int) -> int:
    if 65 <= i <= 90 or 97 <= i <= 122:
        return ord("a")
    if 48 <= i <= 57:
        return ord("0")
    return {ord(" "): ord(" "), ord("\t"): ord("t"), ord("\r"): ord("b"), ord("\f"): ord("b"), ord("\v"): ord("b")}.get(i, ord("o"))


_CLASS_BYTES = bytes(_byte_class(i) for i in range(256))
"""``bytes.translate`` table of a character's class: an ASCII letter becomes ``a``, a digit ``0``, a space a space,
a tab ``t``, another blank (``\\r \\f \\v``) ``b``, every other byte ``o``."""
_LETTER_BYTES = bytes(ord("a") if i == ord("a") else ord(" ") for i in range(256))
"""``bytes.translate`` table from :data:`_CLASS_BYTES`' classes: a letter stays ``a``, every other class a space."""
_RUN_START = (b" a", b" " + b"a" * LETTERS_PER_TOKEN)
"""A run of n letters (``a``) after a space, lengthened by ``LETTERS_PER_TOKEN - 1``: then it holds
ceil(n / LETTERS_PER_TOKEN) non-overlapping runs of ``LETTERS_PER_TOKEN`` letters."""


def estimate_tokens(text: str) -> int:
    """A conservative token count of ``text`` for any BPE tokenizer (see the module docstring)."""
    # every character that is neither a letter nor a blank is one token (digits, punctuation, line
    # breaks, anything else); a run of letters is one token per LETTERS_PER_TOKEN letters, rounded up.
    # Counted with bytes' own scans of the characters' classes, one byte per character (no regular expression
    # unless blanks come in runs): the Curated Input estimates every block of its package.
    classes = text.encode("ascii", "replace").translate(_CLASS_BYTES)
    letter_tokens = (b" " + classes.translate(_LETTER_BYTES)).replace(*_RUN_START).count(_RUN_START[1][1:])
    tabs = classes.count(b"t")
    blanks = classes.count(b" ") + tabs + classes.count(b"b")
    if tabs or b"  " in classes:
        lone = len(_LONE_SPACES.findall(text))
    else:  # every blank is a lone blank: a token when it is a space and a digit follows
        lone = classes.count(b" 0")
    return lone + len(text) - classes.count(b"a") - blanks + letter_tokens


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text for one model.

    Attributes:
        name: what counts (``estimate:clinseek-token-estimate-v1``, ``server:llama.cpp /tokenize``);
            recorded in the run manifest.
        exact: True when the count comes from the model's own tokenizer.
    """

    @property
    def name(self) -> str:
        """What counts (recorded in the run manifest)."""
        ...

    @property
    def exact(self) -> bool:
        """True when the count comes from the model's own tokenizer."""
        ...

    def count(self, text: str) -> int:
        """Tokens of ``text`` (no special tokens)."""
        ...


@dataclass(frozen=True, slots=True)
class EstimatedTokens:
    """The conservative estimate (:func:`estimate_tokens`) as a :class:`TokenCounter`."""

    name: str = f"estimate:{ESTIMATE_VERSION}"
    exact: bool = False

    def count(self, text: str) -> int:
        """Estimated tokens of ``text``."""
        return estimate_tokens(text)


ESTIMATE = EstimatedTokens()
"""The counter used when the server has no tokenizer endpoint (and by default)."""


def _request_texts(messages: Sequence[Message], tools: Sequence[Any]) -> Iterator[tuple[str, int]]:
    """The texts a request's tokens are counted from, each with the tokens added to its count: one per message
    (its text and its tool calls' arguments, plus the template overhead), then the tool schemas as JSON."""
    import json

    for message in messages:
        parts = [message.content]
        parts += [f"{c.name} {json.dumps(c.arguments)}" for c in message.tool_calls]
        yield "\n".join(p for p in parts if p), MESSAGE_OVERHEAD_TOKENS
    if tools:
        yield json.dumps(list(tools)), 0


def messages_tokens(counter: TokenCounter, messages: Sequence[Message], tools: Sequence[Any] = ()) -> int:
    """Tokens of a request: each message's text (and reasoning it carries) plus the template overhead,
    its tool calls' arguments and the tool schemas (as JSON)."""
    return sum(counter.count(text) + extra for text, extra in _request_texts(messages, tools))


def messages_tokens_bound(counter: TokenCounter, messages: Sequence[Message], tools: Sequence[Any] = ()) -> int | None:
    """An upper bound of :func:`messages_tokens` from character counts alone (no tokenizer run, no server
    asked), or ``None`` when ``counter`` has no such bound.

    The bound is the characters of the counted texts plus the same template overhead, for the estimate
    (:class:`EstimatedTokens`): :func:`estimate_tokens` never exceeds ``len(text)``, because a run of
    letters counts at most one token per letter, every other character that is not a blank one token, and
    each blank token (a match of ``_LONE_SPACES``) holds at least one blank character of its own. A
    server's tokenizer has no bound by characters that holds for every vocabulary: ``None``.
    """
    if type(counter) is not EstimatedTokens:  # a subclass may count otherwise
        return None
    return sum(len(text) + extra for text, extra in _request_texts(messages, tools))


_DIALECTS: dict[str, tuple[str, str]] = {
    "llama.cpp": ("/tokenize", "content"),
    "vllm": ("/tokenize", "prompt"),
    "llama-cpp-python": ("/extras/tokenize/count", "input"),
    "tgi": ("/tokenize", "inputs"),
}
"""Tokenizer endpoints by server: (path under the server root, the field that holds the text)."""


@dataclass
class ServerTokenCounter:
    """Exact counts from an OpenAI-compatible server's tokenizer endpoint (sync HTTP; run it in a
    worker thread from async code). A failed request is logged and answered by the estimate, and
    counted in ``fallbacks``.

    Args:
        root: the server root (the base URL without ``/v1``).
        dialect: ``llama.cpp``, ``vllm``, ``llama-cpp-python`` or ``tgi`` (:data:`_DIALECTS`).
        model_id: the model (vLLM needs it).
        headers: request headers (authorization); never recorded.
        timeout_s: seconds per request.
    """

    root: str
    dialect: str
    model_id: str
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    timeout_s: float = 30.0
    fallbacks: int = 0

    @property
    def exact(self) -> bool:
        """Counts come from the server's tokenizer."""
        return True

    @property
    def name(self) -> str:
        """``server:<dialect> <path>``."""
        return f"server:{self.dialect} {_DIALECTS[self.dialect][0]}"

    def _body(self, text: str) -> dict[str, Any]:
        key = _DIALECTS[self.dialect][1]
        body: dict[str, Any] = {key: text}
        if self.dialect == "vllm":
            body.update(model=self.model_id, add_special_tokens=False)
        if self.dialect == "llama.cpp":
            body["add_special"] = False
        return body

    def request(self, text: str) -> int:
        """One exact count; raises on any HTTP or shape problem."""
        import httpx2

        deadline = time.monotonic() + self.timeout_s  # httpx's timeout is per read: bound the whole answer
        with httpx2.stream("POST", self.root + _DIALECTS[self.dialect][0], json=self._body(text),
                           headers=self.headers, timeout=self.timeout_s) as response:
            response.raise_for_status()
            chunks = []
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no complete answer within {self.timeout_s:g} s")
        data = json.loads(b"".join(chunks))
        if isinstance(data, list):  # TGI: one object per token
            return len(data)
        if isinstance(data.get("count"), int):
            return int(data["count"])
        if isinstance(data.get("tokens"), list):
            return len(data["tokens"])
        raise ValueError(f"no 'count' or 'tokens' in the reply: {sorted(data)}")

    def count(self, text: str) -> int:
        """Tokens of ``text`` by the server's tokenizer, or the estimate when the request fails."""
        try:
            return self.request(text)
        except Exception as err:  # an unreachable or changed endpoint must not end a run
            self.fallbacks += 1
            logger.warning("%s: token count failed (%s); using the estimate", self.name, err)
            return estimate_tokens(text)


def server_root(base_url: str) -> str:
    """The server root of an OpenAI-compatible base URL (``http://h:8000/v1`` → ``http://h:8000``)."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def probe_token_counter(base_url: str, model_id: str, headers: dict[str, str] | None = None,
                        timeout_s: float = 5.0) -> TokenCounter:
    """The server's tokenizer endpoint when it has one (checked with a short text), else :data:`ESTIMATE`."""
    root = server_root(base_url)
    for dialect in _DIALECTS:
        counter = ServerTokenCounter(root, dialect, model_id, dict(headers or {}), timeout_s)
        try:
            if counter.request("Hello, world. 12345") > 0:
                return counter
        except Exception:  # not this server's endpoint: try the next one
            continue
    return ESTIMATE


__all__ = [
    "ESTIMATE",
    "ESTIMATE_VERSION",
    "LETTERS_PER_TOKEN",
    "MESSAGE_OVERHEAD_TOKENS",
    "EstimatedTokens",
    "ServerTokenCounter",
    "TokenCounter",
    "estimate_tokens",
    "messages_tokens",
    "messages_tokens_bound",
    "probe_token_counter",
    "server_root",
]
