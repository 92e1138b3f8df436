"""The end-to-end demo: synthetic (or any) store → benchmark → offline baselines → scores → paired tables.

``run_demo`` is what ``clinseek demo`` calls. It sits above ``scoring`` in the layers because it
drives every stage; nothing below imports it.
"""

from ._config import CONFIG_FILE, DEMO_MODELS, DemoConfig, DemoSettings, check_config
from ._demo import DemoResult, Stage, StageCallback, demo_inputs, run_demo
from ._next import DEMO_DOC, next_steps, numbers_note, replay_command
from ._paired import find_delta, model_comparisons

__all__ = [
    "CONFIG_FILE",
    "DEMO_DOC",
    "DEMO_MODELS",
    "DemoConfig",
    "DemoResult",
    "DemoSettings",
    "Stage",
    "StageCallback",
    "check_config",
    "demo_inputs",
    "find_delta",
    "model_comparisons",
    "next_steps",
    "numbers_note",
    "replay_command",
    "run_demo",
]
