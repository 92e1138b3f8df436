"""Helpers of the distill tests: tiny tokenizers with hand-written chat templates, edited result rows."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from clinseek.runner import ResultRow, read_results

HERMES_TEMPLATE = """\
{%- for m in messages -%}
{%- if m.role == 'system' -%}
<|im_start|>system
{{ m.content }}
{%- if tools %}
<tools>
{%- for t in tools %}
{{ t | tojson }}
{%- endfor %}
</tools>
{%- endif %}<|im_end|>
{% elif m.role == 'assistant' -%}
<|im_start|>assistant
{{ m.content or '' }}
{%- for c in m.tool_calls or [] %}
<tool_call>
{{ {"name": c.function.name, "arguments": c.function.arguments} | tojson }}
</tool_call>
{%- endfor %}<|im_end|>
{% elif m.role == 'tool' -%}
<|im_start|>tool
{{ m.content }}<|im_end|>
{% else -%}
<|im_start|>user
{{ m.content }}<|im_end|>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<|im_start|>assistant
{% endif -%}
"""

XML_TEMPLATE = HERMES_TEMPLATE.replace(
    """{{ {"name": c.function.name, "arguments": c.function.arguments} | tojson }}""",
    """<function={{ c.function.name }}>
{%- for k, v in c.function.arguments.items() %}
<parameter={{ k }}>
{{ v if v is string else v | tojson }}
</parameter>
{%- endfor %}
</function>""",
)

LOSSY_TEMPLATE = HERMES_TEMPLATE.replace('"arguments": c.function.arguments', '"arguments": {}')
"""A template that drops every call's arguments: its calls cannot round-trip."""

_CORPUS = [
    "You are a clinical research assistant. Call ehr.load_ehr first; finish with ehr.finish.",
    '{"name": "ehr__run_sql_query", "arguments": {"sql_query": "SELECT charttime, valuenum FROM labevents"}}',
    "Query result: 1 row\nsubject_id hadm_id charttime 2130-01-01 08:00:00 yes no",
    "<tool_call> </tool_call> <function=ehr__finish> <parameter=response> </parameter> </function>",
]


def build_tokenizer(folder: Path, template: str) -> Path:
    """Train a small byte-level BPE tokenizer (lossless on any text) and save it with ``template``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<|im_start|>", "<|im_end|>", "<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    tok.train_from_iterator(_CORPUS * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = template
    fast.save_pretrained(str(folder))
    return folder


def build_family_tokenizer(folder: Path, family: str, vocab_size: int = 600, corpus: Sequence[str] = ()) -> Path:
    """A byte-level BPE tokenizer with ``family``'s special tokens, eos and template (tests/distill/_family_templates.py),
    trained on a small fixed corpus plus ``corpus`` (more text and a larger vocabulary give shorter samples)."""
    from _family_templates import BOS, FAMILY_TEMPLATES
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    template, specials, eos, pad = FAMILY_TEMPLATES[family]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator([*(_CORPUS * 4), *corpus], trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=eos, pad_token=pad, bos_token=BOS.get(family))
    fast.chat_template = template
    fast.save_pretrained(str(folder))
    return folder


def write_run(folder: Path, source: Path, edit: Callable[[list[ResultRow]], Sequence[ResultRow]]) -> Path:
    """Copy the run at ``source`` (a results.jsonl) into ``folder`` with its rows passed through ``edit``."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(source.with_name("run_manifest.json"), folder / "run_manifest.json")
    rows = edit(read_results(source).rows)
    with (folder / "results.jsonl").open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(row.model_dump_json() + "\n")
    return folder / "results.jsonl"


def update(row: ResultRow, **fields: Any) -> ResultRow:
    """``row`` with ``fields`` replaced, validated again."""
    return ResultRow.model_validate({**row.model_dump(), **fields})
