"""The claims behind a score: the judge's claims (or statements, or context verdicts) located in the
text, with the context sentence that supports each — or "not located", never a guess; for an offline
score, the heuristic's own evidence.

Each metric says how its claims are shown (`Metric.claims` from the judge's verdicts,
`Metric.offline_claims` from its heuristic's evidence: faithfulness.py, context_recall.py, ...); this
module asks the score's metric. The alignment itself (a paraphrased claim found in the answer,
reference or contexts, by content words, close words included) is evaluator.metrics.claim_spans,
whose names are public here too; evaluator.analysis.highlight draws a view.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from ..metrics.claim_spans import (  # noqa: F401  (public here: the view's parts and the alignment)
    ANSWER,
    MIN_COVERAGE,
    OFFLINE_COVERAGE,
    REFERENCE,
    Claim,
    ClaimView,
    Where,
    clear_caches,
    context_field,
    locate,
    support,
)
from ..metrics.metric import Metric
from ..metrics.registry import get_metric
from ..model import EvalSample, MetricScore


def _metric(name: str) -> Optional[Metric]:
    """The registered metric called `name`; None for one made for a run (a rubric) or not installed here."""
    try:
        return get_metric(name)
    except ValueError:
        return None


def claim_view(sample: EvalSample, score: MetricScore) -> Optional[ClaimView]:
    """The claims behind one score: the judge's verdicts when it gave some, else the heuristic's
    evidence for the metrics that have one; None for a metric with neither (e.g. relevancy)."""
    verdicts = [v for v in score.verdicts if isinstance(v, dict)]
    if score.skipped:
        return None
    metric = _metric(score.name)
    if metric is None:
        return None
    if verdicts and metric.claims is not None:
        view: ClaimView = metric.claims(sample, verdicts)
        return view
    return metric.offline_claims(sample) if metric.offline_claims is not None else None


def claim_views(sample: EvalSample, scores: Dict[str, MetricScore]) -> List[ClaimView]:
    """The claim view of every metric of a result that has one, in the result's order."""
    return [v for v in (claim_view(sample, ms) for ms in scores.values()) if v is not None]
