"""The inspect_ai entry point (``[project.entry-points.inspect_ai] clinseek``): importing this module
registers the tasks ``clinseek/clinseek_text`` and ``clinseek/clinseek_mm``, the solvers
``clinseek/clinseek_agent`` and ``clinseek/clinseek_curated``, the scorer ``clinseek/clinseek_scorer`` and
the model provider ``clinseek`` (``--model clinseek/baseline:evidence``)."""

from ._model import ClinseekBaselineAPI
from ._scorer import clinseek_scorer
from ._solvers import clinseek_agent, clinseek_curated
from ._tasks import clinseek_mm, clinseek_text

__all__ = ["ClinseekBaselineAPI", "clinseek_agent", "clinseek_curated", "clinseek_mm", "clinseek_scorer", "clinseek_text"]
