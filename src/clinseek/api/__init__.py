"""The front door: ``run``, ``score``, ``report`` and ``open_episode`` (sync, with async twins).

Re-exported at the top level (``clinseek.run`` ...). The CLI's ``run``, ``score``, ``report`` and ``tool``
commands call these functions, and so should an MCP server, a Ray executor or an inspect_ai adapter: each
sync function only wraps its async twin at the edge (as inspect_ai's ``eval()`` wraps ``eval_async()``).
docs/api.md has one runnable example per function.
"""

from ._episode import open_episode, open_episode_async, open_question_episode, open_question_episode_async
from ._report import report, report_async
from ._run import run, run_async
from ._score import score, score_async

__all__ = [
    "open_episode",
    "open_episode_async",
    "open_question_episode",
    "open_question_episode_async",
    "report",
    "report_async",
    "run",
    "run_async",
    "score",
    "score_async",
]
