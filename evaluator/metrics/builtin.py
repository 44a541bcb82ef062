"""The built-in metrics, offered to the registry the way a plugin package offers its own.

A plugin names, under the `ragmeter.metrics` entry points, a Metric, a list of Metrics or a function
returning either; ragmeter's own metrics come in through the same door: registry.py hands `metrics`
to `PluginGroup.register_builtin`, which reads it as it reads an entry point's object (as simonw/llm
registers its own models through the hook every plugin uses). Each metric is defined whole in its
own module; adding a built-in metric is that module and one line in BUILTINS. Its Metric says whether it
is a default (`default=True`; a new one is opt-in) and which languages and heuristic sets it promises
(docs/extending.md; tests/test_extending.py holds every registered metric to its promises).
"""
from __future__ import annotations

from typing import List

from .answer_correctness import ANSWER_CORRECTNESS
from .answer_relevancy import ANSWER_RELEVANCY
from .context_precision import CONTEXT_PRECISION
from .context_recall import CONTEXT_RECALL
from .faithfulness import FAITHFULNESS
from .metric import Metric
from .rules import EXPECTED_DOC_RECALL, KEYWORD_COVERAGE
from .tools import AGENT_METRICS

# Registry order is display order: the five judged metrics, the rule-based ones, then the agent ones
# (tools.py; they appear only on rows with tool calls or expected tools).
BUILTINS = (FAITHFULNESS, ANSWER_RELEVANCY, CONTEXT_PRECISION, CONTEXT_RECALL, ANSWER_CORRECTNESS,
            KEYWORD_COVERAGE, EXPECTED_DOC_RECALL, *AGENT_METRICS)


def metrics() -> List[Metric]:
    """ragmeter's own metrics, as a plugin's entry-point function offers its metrics."""
    return list(BUILTINS)
