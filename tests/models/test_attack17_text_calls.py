"""Attack 17: a bare JSON call written in the text and followed by more text (no server needed).

A fenced block (```json {...}``` then text) and a ``<tool_call>`` block followed by text were read as the
call with the text kept; the same bare JSON object followed by text — "Now waiting for the result.", or a
special token a server left in (``<|eot_id|>``) — was an ``invalid_json`` call whose error told the model
its JSON was not valid JSON (it was).
"""

from __future__ import annotations

from _models_helpers import TOOLS

from clinseek.models._content import calls_in_content
from clinseek.models._names import tool_set

NAMES = tool_set("openai", TOOLS).names
CALL = '{"name": "ehr.run_sql_query", "arguments": {"sql_query": "SELECT 1"}}'


def test_a_bare_json_call_followed_by_text_is_the_call_and_the_text() -> None:
    for after in ["\nNow waiting for the result.", " <|eot_id|>", "\n\nI will read the rows next."]:
        calls, rest = calls_in_content(CALL + after, NAMES)
        assert [(c.name, c.arguments, c.error_kind) for c in calls] == [
            ("ehr.run_sql_query", {"sql_query": "SELECT 1"}, None)
        ], after
        assert rest == after.strip()


def test_json_lines_are_still_parallel_calls_and_a_json_answer_stays_text() -> None:
    two = CALL + "\n" + CALL.replace("SELECT 1", "SELECT 2")
    calls, rest = calls_in_content(two, NAMES)
    assert [c.arguments["sql_query"] for c in calls] == ["SELECT 1", "SELECT 2"] and rest == ""
    answer = '{"response": ["yes"]}\nThat is my answer.'
    assert calls_in_content(answer, NAMES) == ([], answer)


def test_a_bare_call_that_is_broken_json_is_still_flagged() -> None:
    broken = '{"name": "ehr.run_sql_query", "arguments": {"sql_query": "SELECT 1"'
    calls, _ = calls_in_content(broken, NAMES)
    assert [c.error_kind for c in calls] == ["invalid_json"]
