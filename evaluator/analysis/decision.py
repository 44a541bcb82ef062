"""One decision per metric of a comparison, in one vocabulary: better, worse, no clear change, not comparable.

`ragmeter compare` (every format), the History page and the comparison download all say a metric's change with
`decide`, so a reader meets the same four words everywhere:

- **better** / **worse**: the fixed-size test over every pair (paired permutation p < alpha) says the candidate
  moved; the sequential test (runs/ab.py, which may stop at any pair and so has a wider interval) is folded in
  as a footnote (`footnote`) where it reads the change differently;
- **no clear change**: neither direction is clear at alpha;
- **not comparable**: the runs were scored differently (another judge, model, endpoint, heuristic set, language,
  temperature, rubric or alignment: provenance.scorer_differences), or the metric has no pair scored in both.
  A difference of scorers is a difference of rulers, not of pipelines: no verdict is given unless the user
  allows it (`--allow-different-scorers`, the History page's checkbox), and a verdict given then says so.

`Comparability` says once, for the whole comparison, whether verdicts are given and why not ("scored by
different heuristics (default vs jaccard)").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence

from ..store.naming import heuristics_word, is_offline, scorer_label
from .provenance import Difference

BETTER, WORSE, NO_CLEAR_CHANGE, NOT_COMPARABLE = "better", "worse", "no clear change", "not comparable"
DECISIONS = (BETTER, WORSE, NO_CLEAR_CHANGE, NOT_COMPARABLE)
ALLOWED_MARK = " (scorers differ)"  # after a verdict given across scorers (--allow-different-scorers)
# runs/ab.py's sequential decisions in the same words ("A": the baseline is better, so the candidate is worse).
SEQUENTIAL = {"A": WORSE, "B": BETTER, "tie": NO_CLEAR_CHANGE, "undecided": NO_CLEAR_CHANGE}


@dataclass(frozen=True)
class Comparability:
    """Whether a comparison gives verdicts: `comparable` when both runs were scored alike; `allowed` when the user
    asked for verdicts across scorers anyway; `reason` the one line saying how the scorers differ."""

    comparable: bool
    allowed: bool = False
    reason: str = ""

    @property
    def judged(self) -> bool:
        """Whether the metrics get verdicts (better / worse / no clear change)."""
        return self.comparable or self.allowed

    def headline(self) -> str:
        """The comparison's first line when the scorers differ; "" when they match."""
        if self.comparable:
            return ""
        if self.allowed:
            return (f"compared across scorers (--allow-different-scorers): {self.reason}; a change below may be "
                    "the scorer's, not the pipeline's")
        return f"not comparable: {self.reason}; no verdict is given (--allow-different-scorers gives one anyway)"


def comparability(settings_a: Mapping[str, Any], settings_b: Mapping[str, Any], differences: Sequence[Difference],
                  allowed: bool = False) -> Comparability:
    """Whether two runs scored with these settings can be compared; `differences`: provenance.scorer_differences."""
    blocking = [d for d in differences if d.blocks]
    if not blocking:
        return Comparability(True, allowed)
    return Comparability(False, allowed, scored_differently(settings_a, settings_b, blocking))


def scored_differently(settings_a: Mapping[str, Any], settings_b: Mapping[str, Any],
                       blocking: Sequence[Difference]) -> str:
    """How two runs were scored differently, in one phrase: "scored by different heuristics (default vs jaccard)"."""
    label_a, label_b = scorer_label(settings_a), scorer_label(settings_b)
    if is_offline(settings_a) and is_offline(settings_b) and label_a != label_b:
        return f"scored by different heuristics ({heuristics_word(settings_a)} vs {heuristics_word(settings_b)})"
    if label_a != label_b:
        return f"scored by different scorers ({label_a} vs {label_b})"
    return "scored with different settings (" + "; ".join(
        f"{d.what} {d.baseline} vs {d.candidate}" for d in blocking) + ")"


def decide(delta: Optional[float], p_value: Optional[float], alpha: float, judged: bool = True) -> str:
    """A metric's decision from its fixed-size test: better, worse, no clear change, or not comparable (no pair,
    or runs scored differently and not `judged`)."""
    if not judged or delta is None:
        return NOT_COMPARABLE
    if p_value is not None and p_value < alpha and delta != 0:
        return BETTER if delta > 0 else WORSE
    return NO_CLEAR_CHANGE


def shown(decision: str, across: bool) -> str:
    """The decision as a cell says it: marked when it was given across scorers."""
    return decision + ALLOWED_MARK if across and decision != NOT_COMPARABLE else decision


def footnote(metric: str, decision: str, sequential: Any, n_pairs: int, interval: str) -> str:
    """One sentence when the sequential test (`sequential`: analysis.compare.SequentialTest) reads the change
    differently from the decision; "" when they agree, when it was not run, or when nothing was decided."""
    if sequential is None or decision == NOT_COMPARABLE:
        return ""
    other = SEQUENTIAL.get(sequential.decision, NO_CLEAR_CHANGE)
    if other == decision:
        return ""
    return (f"{metric}: {decision} over all {n_pairs} pairs ({interval}); the sequential test, which may stop at "
            f"any pair and so has a wider interval ({sequential.low:+.3f} to {sequential.high:+.3f}), reads "
            f"{other} after {sequential.rows_used} of {sequential.rows_total} rows.")


def counted(decisions: List[str]) -> str:
    """How many metrics went each way, in words ("2 worse · 5 no clear change")."""
    return " · ".join(f"{decisions.count(d)} {d}" for d in DECISIONS if d in decisions)
