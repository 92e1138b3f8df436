"""A prompt the provider's content filter refuses (Azure OpenAI, docs "Content filtering": HTTP 400 with
``error.code`` ``content_filter`` and ``innererror.code`` ``ResponsibleAIPolicyViolation``; clinical text such as
a note about self-harm can trip it). Before: a ``BadRequest``, so the row was an ``infra_error`` that
``clinseek run`` redid on every resume, each time with the same refusal. Now a ``PromptRefused``: not retried,
and the row ends without an answer (``stop_reason`` ``content_filter``, scored 0), in agent and curated mode."""

from __future__ import annotations

import anyio

from clinseek.agent import run_curated
from clinseek.bench import Question
from clinseek.models import BadRequest, GenerateConfig, Message, PromptRefused, get_model
from clinseek.tools import ToolContext
from fakes.llm_servers import OpenAIFake, Reply
from fakes.loop import run_agent_at

AZURE_FILTERED = {"error": {
    "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. "
               "Please modify your prompt and retry.",
    "type": None, "param": "prompt", "code": "content_filter", "status": 400,
    "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": {
        "self_harm": {"filtered": True, "severity": "medium"}, "hate": {"filtered": False, "severity": "safe"}}},
}}


def _generate(url: str) -> Exception | None:
    async def main() -> Exception | None:
        chat = get_model("openai:fake-model", base_url=url)
        try:
            await chat.generate([Message(role="user", content="hi")], [], GenerateConfig(timeout_s=10))
        except Exception as err:
            return err
        finally:
            await chat.aclose()
        return None

    return anyio.run(main)


def test_a_filtered_prompt_is_prompt_refused_and_other_400s_stay_bad_requests(api_keys: str) -> None:
    s = OpenAIFake()
    with s:
        s.script(Reply(400, AZURE_FILTERED))
        err = _generate(s.url)
        s.script(Reply(400, {"error": {"message": "Unrecognized request argument supplied: foo", "code": None}}))
        other = _generate(s.url)
    assert isinstance(err, PromptRefused) and "content management policy" in str(err), err
    assert isinstance(other, BadRequest) and not isinstance(other, PromptRefused), other


def test_an_agent_run_with_a_filtered_prompt_ends_without_an_answer_asking_once(
    api_keys: str, demo_ctx: ToolContext, demo_question: Question
) -> None:
    s = OpenAIFake()
    with s:
        s.script(*[Reply(400, AZURE_FILTERED) for _ in range(4)])
        outcome = run_agent_at(s.url, demo_ctx, demo_question)
        asked = len(s.requests)
    assert (outcome.status, outcome.stop_reason, outcome.error_type) == ("no_answer", "content_filter", "PromptRefused")
    assert "content management policy" in (outcome.error or "")
    assert asked == 1  # never retried: the same prompt gets the same refusal


def test_a_curated_run_with_a_filtered_prompt_ends_without_an_answer(
    api_keys: str, demo_question: Question
) -> None:
    s = OpenAIFake()
    with s:
        s.script(Reply(400, AZURE_FILTERED))

        async def main():  # type: ignore[no-untyped-def]
            chat = get_model("openai:fake-model", base_url=s.url)
            try:
                return await run_curated(chat, demo_question, "## Notes [2150-01-01 00:00:00]\n- text")
            finally:
                await chat.aclose()

        outcome = anyio.run(main)
    assert (outcome.status, outcome.stop_reason) == ("no_answer", "content_filter"), outcome
