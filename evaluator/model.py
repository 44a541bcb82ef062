"""The data model: what goes in (EvalSample) and what comes out (MetricScore, EvalResult, EvalReport).

Everything here is plain data with no I/O, so every other module can import it.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

# The five judged metrics, in display order.
METRICS = (
    "faithfulness",
    "answer_relevancy",
    "context_precision",
    "context_recall",
    "answer_correctness",
)
# Rule-based metrics, reported only for samples that carry keywords / expected documents.
RULE_METRICS = ("keyword_coverage", "expected_doc_recall")

# How a score was made; shown beside every score so no number is unexplained.
METHOD_BLEND = "llm_blend"  # 0.7 * judge + 0.3 * heuristic
METHOD_FALLBACK = "heuristic_fallback"  # judge failed; heuristic alone, and the reason is recorded
METHOD_OFFLINE = "offline"  # no judge by choice; heuristic alone
METHOD_SKIPPED = "skipped"  # not computable for this sample (e.g. no reference)
METHOD_RULE = "rule"  # deterministic rule (keyword coverage, expected-doc recall)

METHOD_LABELS = {
    METHOD_BLEND: "LLM + heuristic blend",
    METHOD_FALLBACK: "heuristic after judge failure",
    METHOD_OFFLINE: "offline heuristic",
    METHOD_SKIPPED: "skipped",
    METHOD_RULE: "rule-based",
}


@dataclass
class EvalSample:
    """One RAG interaction to score."""

    question: str
    answer: str
    contexts: List[str]
    ground_truth: Optional[str] = None
    sample_id: Optional[str] = None
    expected_answer_keywords: Optional[List[str]] = None
    expected_docs: Optional[List[str]] = None
    category: Optional[str] = None
    metadata: Dict[str, Any] = field(default_factory=dict)


@dataclass
class MetricScore:
    """A score with everything needed to see how it was made."""

    name: str
    score: float
    reasoning: str = ""
    skipped: bool = False
    method: str = ""
    llm_score: Optional[float] = None
    heuristic_score: Optional[float] = None
    raw_reply: Optional[str] = None
    verdicts: List[Dict[str, Any]] = field(default_factory=list)
    error: Optional[str] = None

    def __repr__(self) -> str:
        if self.skipped:
            return f"MetricScore({self.name}=N/A [skipped])"
        return f"MetricScore({self.name}={self.score:.3f})"

    def to_dict(self) -> Dict[str, Any]:
        return {
            "name": self.name,
            "score": None if self.skipped else round(self.score, 4),
            "skipped": self.skipped,
            "method": self.method,
            "llm_score": self.llm_score,
            "heuristic_score": self.heuristic_score,
            "reasoning": self.reasoning,
            "raw_reply": self.raw_reply,
            "verdicts": list(self.verdicts),
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "MetricScore":
        score = data.get("score")
        return cls(
            name=data["name"],
            score=0.0 if score is None else float(score),
            reasoning=data.get("reasoning") or "",
            skipped=bool(data.get("skipped")),
            method=data.get("method") or "",
            llm_score=data.get("llm_score"),
            heuristic_score=data.get("heuristic_score"),
            raw_reply=data.get("raw_reply"),
            verdicts=list(data.get("verdicts") or []),
            error=data.get("error"),
        )


@dataclass
class EvalResult:
    """The five metric scores of one sample (plus rule-based ones when the sample allows)."""

    sample_id: Optional[str]
    faithfulness: MetricScore
    answer_relevancy: MetricScore
    context_precision: MetricScore
    context_recall: MetricScore
    answer_correctness: MetricScore
    elapsed_sec: float = 0.0
    extra: Dict[str, MetricScore] = field(default_factory=dict)
    sample: Optional[EvalSample] = None

    def metric_scores(self) -> Dict[str, MetricScore]:
        """Every MetricScore of this result, the five first, then rule-based ones."""
        scores = {name: getattr(self, name) for name in METRICS}
        scores.update(self.extra)
        return scores

    def scores(self) -> Dict[str, Optional[float]]:
        """Metric name -> score rounded to 4 decimals, or None when skipped."""
        return {
            name: None if ms.skipped else round(ms.score, 4)
            for name, ms in self.metric_scores().items()
        }

    def overall(self) -> float:
        """Mean of the five judged metrics that were not skipped; 0.0 when all were."""
        values = [getattr(self, n).score for n in METRICS if not getattr(self, n).skipped]
        return round(sum(values) / len(values), 4) if values else 0.0

    def summary(self) -> str:
        lines = [f"Sample {self.sample_id or '-'}  (overall {self.overall():.3f}, {self.elapsed_sec:.2f}s)"]
        for name, ms in self.metric_scores().items():
            shown = "N/A [skipped]" if ms.skipped else f"{ms.score:.3f}"
            how = METHOD_LABELS.get(ms.method, ms.method)
            lines.append(f"  {name:<20} {shown:<14} {how}")
            if ms.reasoning:
                lines.append(f"    {ms.reasoning}")
        return "\n".join(lines)

    def to_dict(self) -> Dict[str, Any]:
        data: Dict[str, Any] = dict(self.scores())
        data["overall"] = self.overall()
        data["elapsed_sec"] = round(self.elapsed_sec, 4)
        data["sample_id"] = self.sample_id
        return data


def _mean(values: List[float]) -> Optional[float]:
    return round(statistics.fmean(values), 4) if values else None


def _stdev(values: List[float]) -> Optional[float]:
    return round(statistics.stdev(values), 4) if len(values) >= 2 else None


@dataclass
class EvalReport:
    """All results of a run, with aggregate statistics."""

    results: List[EvalResult] = field(default_factory=list)
    total_time: float = 0.0
    usage: Dict[str, Any] = field(default_factory=dict)

    def metric_names(self) -> List[str]:
        """The five metrics, then any rule-based metric that at least one sample has."""
        names = list(METRICS)
        names += [m for m in RULE_METRICS if any(m in r.extra for r in self.results)]
        return names

    def values(self, metric: str) -> List[float]:
        """The non-skipped scores of one metric across results, in result order."""
        out = []
        for r in self.results:
            ms = r.metric_scores().get(metric)
            if ms is not None and not ms.skipped:
                out.append(ms.score)
        return out

    def mean_scores(self) -> Dict[str, Optional[float]]:
        return {m: _mean(self.values(m)) for m in self.metric_names()}

    def std_scores(self) -> Dict[str, Optional[float]]:
        return {m: _stdev(self.values(m)) for m in self.metric_names()}

    def overall_mean(self) -> float:
        return round(statistics.fmean([r.overall() for r in self.results]), 4) if self.results else 0.0

    def method_counts(self, metric: str) -> Dict[str, int]:
        """How many samples were scored each way for one metric (blend, fallback, offline, skipped)."""
        counts: Dict[str, int] = {}
        for r in self.results:
            ms = r.metric_scores().get(metric)
            if ms is not None:
                counts[ms.method] = counts.get(ms.method, 0) + 1
        return counts

    def to_dict(self) -> Dict[str, Any]:
        data = {
            "num_samples": len(self.results),
            "total_time_s": round(self.total_time, 4),
            "mean_scores": self.mean_scores(),
            "std_scores": self.std_scores(),
            "overall_mean": self.overall_mean(),
            "samples": [r.to_dict() for r in self.results],
        }
        if self.usage:
            data["usage"] = dict(self.usage)
        return data

    def format_report(self) -> str:
        means, stds = self.mean_scores(), self.std_scores()
        rows = [(m, means[m], stds[m], len(self.values(m))) for m in self.metric_names()]
        return format_table(len(self.results), self.total_time, rows, self.overall_mean())

    def print_report(self) -> None:
        print(self.format_report())


def format_table(n_samples: int, total_time: float,
                 rows: List[Tuple[str, Optional[float], Optional[float], int]], overall: float) -> str:
    """The printed report: one line per (metric, mean, std, n scored), then the overall mean."""
    width = 44
    lines = ["=" * width, f" RAG evaluation report: {n_samples} samples, {total_time:.2f}s", "=" * width]
    for m, mean, std, n in rows:
        cell = "N/A" if mean is None else f"{mean:.3f}" + (f" ± {std:.3f}" if std is not None else "")
        lines.append(f" {m:<20} {cell:<15} n={n}")
    lines.append("-" * width)
    lines.append(f" {'overall':<20} {overall:.3f}")
    lines.append("=" * width)
    return "\n".join(lines)
