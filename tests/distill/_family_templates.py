"""Chat templates of the supported families, written for the tests (nothing is downloaded).

Each renders a conversation the way its family's released template does for the messages clinseek exports
(system, user, assistant turns with tool calls and empty content, tool results): the same turn markers,
tool-call syntax, tool-result placement, generation prompt and thinking blocks. Tool preambles are
shortened (their wording does not change where turns start and end).

- Qwen3: ChatML; ``<tool_call>`` JSON calls; consecutive tool results in one user turn as
  ``<tool_response>``; an empty think block on the last assistant turn after the last user message.
- Qwen3.5: ChatML; ``<tool_call><function=..><parameter=..>`` XML calls; every assistant turn after the
  last user message opens with a think block; the generation prompt closes an empty one when
  ``enable_thinking`` is false and opens one otherwise.
- Llama 3.1/3.2: header tokens; tools in the first user turn; one ``{"name", "parameters"}`` JSON call per
  assistant turn (several raise), results in ``ipython`` turns (a string result is JSON-quoted, as the
  released template's ``is iterable`` test makes it).
- Gemma 4: ``<|turn>role ... <turn|>``; declarations in the system turn; ``<|tool_call>call:NAME{..}<tool_call|>``
  with ``<|"|>``-quoted strings; ``<|think|>`` with ``enable_thinking``, else an empty thought channel in the
  generation prompt only.
"""

from __future__ import annotations

QWEN3 = """\
{%- if tools %}<|im_start|>system
{% if messages[0].role == 'system' %}{{ messages[0].content }}

{% endif %}# Tools

<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools><|im_end|>
{% elif messages[0].role == 'system' %}<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif %}
{%- set ns = namespace(last_query=-1) %}
{%- for m in messages %}{% if m.role == 'user' %}{% set ns.last_query = loop.index0 %}{% endif %}{% endfor %}
{%- for m in messages %}
{%- if m.role == 'user' or (m.role == 'system' and not loop.first) -%}
<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% elif m.role == 'assistant' -%}
{%- set content = m.content or '' -%}
{%- set reasoning = m.reasoning_content or '' -%}
{%- if loop.index0 > ns.last_query and (loop.last or reasoning) -%}
<|im_start|>assistant
<think>
{{ reasoning.strip() }}
</think>

{{ content.lstrip() }}
{%- else -%}
<|im_start|>assistant
{{ content }}
{%- endif -%}
{%- for call in m.tool_calls or [] -%}
{%- if (loop.first and content) or not loop.first %}
{% endif -%}
<tool_call>
{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}
</tool_call>
{%- endfor -%}
<|im_end|>
{% elif m.role == 'tool' -%}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}<|im_start|>user{% endif %}
<tool_response>
{{ m.content }}
</tool_response>
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}<|im_end|>
{% endif -%}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<|im_start|>assistant
{% if enable_thinking is defined and enable_thinking is false %}<think>

</think>

{% endif -%}
{%- endif -%}
"""

QWEN35 = """\
{%- if tools %}<|im_start|>system
# Tools

You have access to the following functions:

<tools>
{%- for tool in tools %}
<function>
<name>{{ tool.function.name }}</name>
<description>{{ tool.function.description }}</description>
</function>
{%- endfor %}
</tools>
{%- if messages[0].role == 'system' %}

{{ messages[0].content }}{% endif %}<|im_end|>
{% elif messages[0].role == 'system' %}<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif %}
{%- set ns = namespace(last_query=-1) %}
{%- for m in messages %}{% if m.role == 'user' %}{% set ns.last_query = loop.index0 %}{% endif %}{% endfor %}
{%- for m in messages %}
{%- if m.role == 'user' or (m.role == 'system' and not loop.first) -%}
<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% elif m.role == 'assistant' -%}
{%- set content = m.content or '' -%}
{%- if loop.index0 > ns.last_query -%}
<|im_start|>assistant
<think>
{{ (m.reasoning_content or '') | trim }}
</think>

{{ content }}
{%- else -%}
<|im_start|>assistant
{{ content }}
{%- endif -%}
{%- for call in m.tool_calls or [] -%}
{%- if not loop.first %}
{% elif content | trim %}

{% endif -%}
<tool_call>
<function={{ call.function.name }}>
{% for key, value in call.function.arguments | items -%}
<parameter={{ key }}>
{{ value | tojson if value is mapping or (value is sequence and value is not string) else value | string }}
</parameter>
{% endfor -%}
</function>
</tool_call>
{%- endfor -%}
<|im_end|>
{% elif m.role == 'tool' -%}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}<|im_start|>user{% endif %}
<tool_response>
{{ m.content }}
</tool_response>
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}<|im_end|>
{% endif -%}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<|im_start|>assistant
{% if enable_thinking is defined and enable_thinking is false %}<think>

</think>

{% else %}<think>
{% endif -%}
{%- endif -%}
"""

LLAMA3 = """\
{{- bos_token }}
{%- if messages[0].role == 'system' %}{% set system = messages[0].content | trim %}{% set rest = messages[1:] %}
{%- else %}{% set system = '' %}{% set rest = messages %}{% endif -%}
<|start_header_id|>system<|end_header_id|>

{% if tools %}Environment: ipython
{% endif %}Cutting Knowledge Date: December 2023
Today Date: {{ date_string if date_string is defined else '26 Jul 2024' }}

{{ system }}<|eot_id|>
{%- for m in rest %}
{%- if loop.first and tools and m.role == 'user' -%}
<|start_header_id|>user<|end_header_id|>

Given the following functions, please respond with a JSON for a function call with its proper arguments.

Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.

{% for tool in tools %}{{ tool | tojson(indent=4) }}

{% endfor %}{{ m.content | trim }}<|eot_id|>
{%- elif m.role == 'assistant' and m.tool_calls -%}
{%- if m.tool_calls | length != 1 %}{{ raise_exception('This model only supports single tool-calls at once!') }}{% endif -%}
<|start_header_id|>assistant<|end_header_id|>

{"name": "{{ m.tool_calls[0].function.name }}", "parameters": {{ m.tool_calls[0].function.arguments | tojson }}}<|eot_id|>
{%- elif m.role == 'tool' -%}
<|start_header_id|>ipython<|end_header_id|>

{% if m.content is mapping or m.content is iterable %}{{ m.content | tojson }}{% else %}{{ m.content }}{% endif %}<|eot_id|>
{%- else -%}
<|start_header_id|>{{ m.role }}<|end_header_id|>

{{ m.content | trim }}<|eot_id|>
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<|start_header_id|>assistant<|end_header_id|>

{% endif -%}
"""

GEMMA4 = """\
{%- macro arg(value) -%}
{%- if value is string -%}<|"|>{{ value }}<|"|>
{%- elif value is boolean -%}{{ 'true' if value else 'false' }}
{%- elif value is mapping -%}{ {%- for k, v in value | dictsort -%}{{ k }}:{{ arg(v) }}{{ ',' if not loop.last }}{%- endfor -%} }
{%- elif value is sequence -%}[{%- for v in value -%}{{ arg(v) }}{{ ',' if not loop.last }}{%- endfor -%}]
{%- else -%}{{ value }}
{%- endif -%}
{%- endmacro -%}
{{- bos_token -}}
{%- set rest = messages -%}
{%- if (enable_thinking is defined and enable_thinking) or tools or messages[0].role == 'system' -%}
<|turn>system
{% if enable_thinking is defined and enable_thinking %}<|think|>{% endif -%}
{%- if messages[0].role == 'system' %}{{ messages[0].content | trim }}{% set rest = messages[1:] %}{% endif -%}
{%- for tool in tools or [] -%}
<|tool>declaration:{{ tool.function.name }}{description:<|"|>{{ tool.function.description }}<|"|>}<tool|>
{%- endfor -%}
<turn|>
{% endif -%}
{%- for m in rest -%}
<|turn>{{ 'model' if m.role == 'assistant' else m.role }}
{% for call in m.tool_calls or [] -%}
<|tool_call>call:{{ call.function.name }}{ {%- for k, v in call.function.arguments | dictsort -%}{{ k }}:{{ arg(v) }}{{ ',' if not loop.last }}{%- endfor -%} }<tool_call|>
{%- endfor -%}
{{ (m.content or '') | trim }}<turn|>
{% endfor -%}
{%- if add_generation_prompt -%}
<|turn>model
{% if not (enable_thinking is defined and enable_thinking) %}<|channel>thought
<channel|>{% endif -%}
{%- endif -%}
"""

FAMILY_TEMPLATES: dict[str, tuple[str, list[str], str, str]] = {
    "qwen3": (QWEN3, ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_call>", "</tool_call>"],
              "<|im_end|>", "<|endoftext|>"),
    "qwen3.5": (QWEN35, ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_call>", "</tool_call>"],
                "<|im_end|>", "<|endoftext|>"),
    "llama3": (LLAMA3, ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",
                        "<|python_tag|>", "<|finetune_right_pad_id|>"], "<|eot_id|>", "<|finetune_right_pad_id|>"),
    "gemma4": (GEMMA4, ["<bos>", "<pad>", "<|turn>", "<turn|>", "<|tool>", "<tool|>", "<|tool_call>",
                        "<tool_call|>", '<|"|>', "<|think|>", "<|channel>", "<channel|>"], "<turn|>", "<pad>"),
}
"""Per family: template, special tokens, end-of-turn (eos) token, pad token."""

BOS = {"llama3": "<|begin_of_text|>", "gemma4": "<bos>"}
"""Families whose template starts with the tokenizer's ``bos_token``."""
