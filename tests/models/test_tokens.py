"""Token counts: each server's tokenizer endpoint found and used; the conservative estimate."""

from __future__ import annotations

import pytest

from clinseek.models import (
    ESTIMATE,
    Message,
    ServerTokenCounter,
    estimate_tokens,
    messages_tokens,
    messages_tokens_bound,
    probe_token_counter,
)
from fakes.llm_servers import OpenAIFake, fake_token_count

TEXT = "## Labevents [2180-07-23 12:00:00]\n- Glucose: 120 mg/dL; flag: abnormal"


@pytest.mark.parametrize(("profile", "name"), [
    ("llama.cpp", "server:llama.cpp /tokenize"),
    ("vllm", "server:vllm /tokenize"),
    ("llama-cpp-python", "server:llama-cpp-python /extras/tokenize/count"),
])
def test_the_servers_tokenizer_endpoint_is_found_and_counts_exactly(profile: str, name: str) -> None:
    with OpenAIFake(profile=profile) as server:
        counter = probe_token_counter(server.url, "Qwen/Qwen3-8B")
        assert counter.name == name and counter.exact
        assert counter.count(TEXT) == fake_token_count(TEXT)


def test_a_server_without_one_gets_the_estimate() -> None:
    with OpenAIFake(profile="ollama") as server:
        assert probe_token_counter(server.url, "qwen2.5:7b") is ESTIMATE


def test_a_failing_endpoint_falls_back_to_the_estimate_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    with OpenAIFake(profile="llama.cpp") as server:
        counter = ServerTokenCounter(server.url.removesuffix("/v1"), "llama.cpp", "m")
    assert counter.count(TEXT) == estimate_tokens(TEXT)  # the server is gone
    assert counter.fallbacks == 1 and "token count failed" in caplog.text


def test_the_estimate_counts_digits_and_punctuation_one_by_one() -> None:
    assert estimate_tokens("2180-07-23") == 10
    assert estimate_tokens("Glucose") == 3  # letters: ceil(7 / 3)
    assert estimate_tokens("a b\n") == 3  # spaces are free, a line break is a token
    assert estimate_tokens("é") == 1


def test_a_request_counts_messages_calls_and_tool_schemas() -> None:
    messages = [Message.system("You are careful."), Message.user(TEXT)]
    bare = messages_tokens(ESTIMATE, messages)
    assert bare == sum(estimate_tokens(m.content) + 8 for m in messages)
    assert messages_tokens(ESTIMATE, messages, [{"name": "ehr.finish"}]) > bare


def _estimate_by_its_definition(text: str) -> int:
    """The estimate as the module docstring defines it, with regular expressions: every character that is neither
    an ASCII letter nor a blank one token, a run of letters one per 3 letters (rounded up), a blank before a digit
    or in a run of two or more one token per run."""
    import re

    runs = re.findall(r"[A-Za-z]+", text)
    return (
        len(re.findall(r"[ \t]+(?=[0-9])|[ \t]{2,}(?![ \t]*[0-9])", text))
        + len(text) - sum(map(len, runs)) - sum(text.count(c) for c in " \t\r\f\v")
        + sum(-(-len(run) // 3) for run in runs)
    )


def test_the_estimate_is_its_definition_on_any_text() -> None:
    import random

    rng = random.Random(22)
    alphabet = "aZq09 \t\r\n\v;:.-_Äé中\ud800"
    texts = ["", " ", "  9", "abc", "abcd efgh 1", "a\t9", "x  y", "- flag: abnormal; value: 7.4 mg/dL", TEXT]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))) for _ in range(4000)]
    for text in texts:
        assert estimate_tokens(text) == _estimate_by_its_definition(text), repr(text)


def _texts() -> list[str]:
    """Every string of up to 4 characters over a letter, a digit, each blank, a line break, punctuation and a
    non-ASCII letter, every one of 5 over letters, a digit and blanks, then seeded random longer ones (runs of
    blanks before digits, column alignment)."""
    import itertools
    import random

    alphabet = "a1 \t\r\n.é\f\v"
    out = ["".join(p) for n in range(5) for p in itertools.product(alphabet, repeat=n)]
    out += ["".join(p) for p in itertools.product("aZ 1\t\n", repeat=5)]
    rng = random.Random(7)
    pieces = ["Glucose", " ", "  ", "\t", "120", " 7.5", "\n", "mg/dL", "—", "  |", "é", "\r\n", "\v", "\f", "xyzw"]
    out += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 80))) for _ in range(3000)]
    return out


def test_the_estimate_never_exceeds_the_characters() -> None:
    """The bound the agent loop uses to skip counting (``messages_tokens_bound``) rests on this."""
    for text in _texts():
        assert estimate_tokens(text) <= len(text), repr(text)


def test_the_character_bound_of_a_request_bounds_its_estimate() -> None:
    from clinseek.models import ToolCall
    from clinseek.tools import tool_names, tool_schemas

    texts = _texts()[-50:]
    calls = [ToolCall(id=f"c{i}", name="ehr.run_sql_query", arguments={"sql_query": t}) for i, t in enumerate(texts[:5])]
    messages = [Message.system(texts[0]), Message.user(texts[1]),
                Message(role="assistant", content=texts[2], tool_calls=calls),
                *(Message.tool(c, t) for c, t in zip(calls, texts[3:], strict=False))]
    schemas = tool_schemas(tool_names("ehr"))
    for tools in ([], schemas):
        bound = messages_tokens_bound(ESTIMATE, messages, tools)
        assert bound is not None and messages_tokens(ESTIMATE, messages, tools) <= bound
    assert messages_tokens_bound(ESTIMATE, [], []) == 0


def test_no_character_bound_for_a_servers_tokenizer() -> None:
    counter = ServerTokenCounter("http://127.0.0.1:9", "llama.cpp", "m")
    assert messages_tokens_bound(counter, [Message.user(TEXT)]) is None
