"""clinseek's benchmarks as inspect_ai tasks, and inspect logs back as clinseek results (docs/inspect.md).

``pip install 'clinseek[inspect]'`` registers the inspect_ai entry point, so that::

    inspect eval clinseek/clinseek_text -T bench=BENCH -T store=STORE -T mode=agent --model openai/gpt-4o
    inspect eval clinseek/clinseek_mm -T demo=true --model clinseek/baseline:evidence     # offline
    clinseek import-inspect logs/....eval --out runs/ && clinseek score runs/

Each sample is one benchmark question (``id`` the qid). The agent solver opens the question's sealed
episode through the front door (``clinseek.open_question_episode_async``) and offers clinseek's tools
as inspect tools (``ehr.run_sql_query`` as ``ehr__run_sql_query``; same texts, refusals as inspect
``ToolError``); the curated solver makes one call on the Curated Input; the scorer is clinseek's one
scorer. This package sits above the front door and imports inspect_ai (the ``inspect`` extra).
"""

from ._import import ImportedRun, import_inspect_log, sample_view
from ._messages import NAME_RULE, ImageFiles, from_inspect, inspect_name_map, to_inspect
from ._model import PROVIDER, ClinseekBaselineAPI
from ._outcome import STORE_KEY, SampleOutcome
from ._rows import QUESTION_FIELDS, RunIdentity, SampleView, result_row, sample_outcome, score_row
from ._scorer import clinseek_scorer
from ._solvers import clinseek_agent, clinseek_curated
from ._tasks import (
    METADATA_KEY,
    clinseek_mm,
    clinseek_task,
    clinseek_text,
    demo_folder,
    question_sample,
)
from ._tools import episode_tools, tool_output

__all__ = [
    "METADATA_KEY",
    "NAME_RULE",
    "PROVIDER",
    "QUESTION_FIELDS",
    "STORE_KEY",
    "ClinseekBaselineAPI",
    "ImageFiles",
    "ImportedRun",
    "RunIdentity",
    "SampleOutcome",
    "SampleView",
    "clinseek_agent",
    "clinseek_curated",
    "clinseek_mm",
    "clinseek_scorer",
    "clinseek_task",
    "clinseek_text",
    "demo_folder",
    "episode_tools",
    "from_inspect",
    "import_inspect_log",
    "inspect_name_map",
    "question_sample",
    "result_row",
    "sample_outcome",
    "sample_view",
    "score_row",
    "to_inspect",
    "tool_output",
]
