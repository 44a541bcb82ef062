"""Retrieval metrics from document ids: exact, no judge call.

    hit@k         1 when a relevant document is among the first k retrieved, else 0
    recall@k      share of the relevant documents found among the first k
    precision@k   relevant documents among the first k, divided by k (as trec_eval: a list shorter
                  than k is not rewarded for being short)
    mrr@k         1 / rank of the first relevant document within the first k, 0 when none is
    ndcg@k        normalised DCG, linear gain: DCG = sum(grade_i / log2(i + 1)), over the ideal order
    ndcg_exp@k    the same with exponential gain 2**grade - 1 (Burges et al.; equal to ndcg on 0/1 grades)

The k is part of the name (`ndcg@5`, `hit@3`); a bare name (`ndcg`, `mrr`) means k=5 and is reported
as `ndcg@5`. Inputs: the sample's ranked `retrieval_ids` and either `relevance` ({doc id: grade},
graded, a grade of 0 is not relevant) or `expected_docs` (binary: each listed document has grade 1).
Ids are compared trimmed and case-insensitively. Conventions, as in trec_eval:
  - a document retrieved twice counts once, at its first rank; the later copy gains nothing but
    keeps its rank, so the documents below it are not promoted;
  - a retrieved document without an id (an empty id) is not relevant and keeps its rank;
  - a row without ids, or without any relevant document, is N/A with the reason, never 0.
Each score's `verdicts` hold the per-rank breakdown (rank, id, grade, gain, discount, note) that the
Report's drill-down shows.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..model import METHOD_RULE, METHOD_SKIPPED, EvalSample, MetricScore
from .metric import RULE, Metric, advice

DEFAULT_K = 5
MAX_K = 1000  # a k this large is a typo, not a cut-off
NO_IDS = ("No retrieval ids for this sample: give a retrieval_ids column (a ranked list of document ids), "
          "or contexts whose metadata carries an id.")
NO_RELEVANCE = "No relevance judgments for this sample: give expected_docs (document ids) or relevance ({id: grade})."
NONE_RELEVANT = "No document is relevant to this sample (every relevance grade is 0), so the metric is undefined."
_NAME = re.compile(r"^(hit|recall|precision|mrr|ndcg|ndcg_exp)(?:@(\d+))?$")


def _key(doc_id: object) -> str:
    return str(doc_id).strip().casefold() if doc_id is not None else ""


def relevance_of(sample: EvalSample) -> Dict[str, float]:
    """Doc id (normalised) -> grade: the sample's graded `relevance`, else 1 for each expected document."""
    if sample.relevance:
        return {_key(d): float(g) for d, g in sample.relevance.items() if _key(d)}
    return {_key(d): 1.0 for d in sample.expected_docs or [] if _key(d)}


@dataclass(frozen=True)
class Rank:
    """One retrieved position: its document, its grade and whether it counts (a repeat does not)."""

    rank: int  # 1-based
    doc_id: str
    grade: float
    note: str = ""  # "duplicate of rank N", "no id"

    @property
    def relevant(self) -> bool:
        return self.grade > 0


def ranks(ids: Sequence[object], relevance: Mapping[str, float], k: int) -> List[Rank]:
    """The first k retrieved positions with their grades (a repeat or a missing id has grade 0)."""
    seen: Dict[str, int] = {}
    out = []
    for i, doc in enumerate(list(ids)[:k], start=1):
        key = _key(doc)
        if not key:
            out.append(Rank(i, "", 0.0, "no id"))
        elif key in seen:
            out.append(Rank(i, str(doc).strip(), 0.0, f"duplicate of rank {seen[key]}"))
        else:
            seen[key] = i
            out.append(Rank(i, str(doc).strip(), relevance.get(key, 0.0)))
    return out


def linear_gain(grade: float) -> float:
    return grade


def exp_gain(grade: float) -> float:
    return 2.0 ** grade - 1.0


def _discount(rank: int) -> float:
    return 1.0 / math.log2(rank + 1)


def hit(rs: List[Rank], relevance: Mapping[str, float], k: int) -> float:
    return 1.0 if any(r.relevant for r in rs) else 0.0


def recall(rs: List[Rank], relevance: Mapping[str, float], k: int) -> float:
    wanted = sum(1 for g in relevance.values() if g > 0)
    return sum(1 for r in rs if r.relevant) / wanted


def precision(rs: List[Rank], relevance: Mapping[str, float], k: int) -> float:
    return sum(1 for r in rs if r.relevant) / k


def mrr(rs: List[Rank], relevance: Mapping[str, float], k: int) -> float:
    return next((1.0 / r.rank for r in rs if r.relevant), 0.0)


def _ndcg(gain: Callable[[float], float]) -> Callable[[List[Rank], Mapping[str, float], int], float]:
    def ndcg(rs: List[Rank], relevance: Mapping[str, float], k: int) -> float:
        dcg = sum(gain(r.grade) * _discount(r.rank) for r in rs)
        ideal = sorted((g for g in relevance.values() if g > 0), reverse=True)[:k]
        return dcg / sum(gain(g) * _discount(i) for i, g in enumerate(ideal, start=1))
    return ndcg


Formula = Callable[[List[Rank], Mapping[str, float], int], float]
FORMULAS: Dict[str, Tuple[Formula, str]] = {
    "hit": (hit, "1 when a relevant document is in the first {k}"),
    "recall": (recall, "share of the relevant documents in the first {k}"),
    "precision": (precision, "relevant documents in the first {k}, divided by {k}"),
    "mrr": (mrr, "1 / rank of the first relevant document within the first {k}"),
    "ndcg": (_ndcg(linear_gain), "nDCG over the first {k}, linear gain (grade)"),
    "ndcg_exp": (_ndcg(exp_gain), "nDCG over the first {k}, exponential gain (2^grade - 1)"),
}


def parse_name(name: str) -> Optional[Tuple[str, int]]:
    """(family, k) for a retrieval metric's name (`ndcg@5`, `mrr` = k 5), or None for any other name.

    A k that is not a whole number from 1 to MAX_K raises ValueError naming the metric."""
    found = _NAME.match(name.strip().lower())
    if found is None:
        return None
    k = int(found.group(2)) if found.group(2) else DEFAULT_K
    if not 1 <= k <= MAX_K:
        raise ValueError(f"metric {name!r}: k must be from 1 to {MAX_K}, e.g. {found.group(1)}@5")
    return found.group(1), k


def canonical(name: str) -> str:
    """The reported name of a retrieval metric (`mrr` -> `mrr@5`); other names unchanged."""
    parsed = parse_name(name)
    return f"{parsed[0]}@{parsed[1]}" if parsed else name


def score(family: str, k: int, sample: EvalSample) -> MetricScore:
    """One retrieval metric of one sample, with its per-rank breakdown, or N/A with the reason."""
    name = f"{family}@{k}"
    reason = _missing(sample)
    if reason:
        return MetricScore(name, 0.0, reason, skipped=True, method=METHOD_SKIPPED)
    relevance = relevance_of(sample)
    if not any(g > 0 for g in relevance.values()):
        return MetricScore(name, 0.0, NONE_RELEVANT, skipped=True, method=METHOD_SKIPPED)
    formula, says = FORMULAS[family]
    rs = ranks(sample.retrieval_ids or [], relevance, k)
    value = formula(rs, relevance, k)
    return MetricScore(name, value, _reasoning(says.format(k=k), rs, relevance, k, len(sample.retrieval_ids or [])),
                       method=METHOD_RULE, verdicts=_breakdown(family, rs))


def _missing(sample: EvalSample) -> Optional[str]:
    ids = sample.retrieval_ids or []
    if not ids:
        return NO_IDS
    if not any(_key(d) for d in ids):
        return f"None of the {len(ids)} retrieved documents has an id, so no rank can be matched."
    if not sample.relevance and not sample.expected_docs:
        return NO_RELEVANCE
    return None


def _reasoning(says: str, rs: List[Rank], relevance: Mapping[str, float], k: int, retrieved: int) -> str:
    found = [f"{r.doc_id} (rank {r.rank})" for r in rs if r.relevant]
    wanted = sum(1 for g in relevance.values() if g > 0)
    text = f"{says}: {len(found)} of {wanted} relevant found" + (f": {', '.join(found)}" if found else "")
    return text + (f"; only {retrieved} retrieved." if retrieved < k else ".")


def _breakdown(family: str, rs: List[Rank]) -> List[Dict[str, object]]:
    gain = exp_gain if family == "ndcg_exp" else linear_gain
    return [{"rank": r.rank, "doc_id": r.doc_id, "grade": r.grade, "relevant": r.relevant,
             "gain": round(gain(r.grade), 6), "discount": round(_discount(r.rank), 6), "note": r.note}
            for r in rs]


_ADVICE = advice("Retrieval ranks the expected documents low or misses them.",
                 "Rerank the retrieved chunks (for example with a cross-encoder) so relevant ones come first.",
                 "Raise top_k or use hybrid search (keyword + vector) so the relevant documents are retrieved.")


def retrieval_metric(name: str) -> Optional[Metric]:
    """The Metric for a retrieval metric's name (`hit@3`, `ndcg`), or None when `name` is not one."""
    parsed = parse_name(name)
    if parsed is None:
        return None
    family, k = parsed

    def rule(sample: EvalSample) -> MetricScore:
        return score(family, k, sample)

    says = FORMULAS[family][1].format(k=k)
    return Metric(f"{family}@{k}", kind=RULE, rule=rule, advice=_ADVICE,
                  description=f"Retrieval by document id: {says}.")


# What the dashboard's metric picker offers (any other k is one typed name away in the CLI and library).
CHOICES = ("hit@1", "hit@3", "recall@5", "recall@10", "precision@5", "mrr@10", "ndcg@5", "ndcg@10", "ndcg_exp@10")
NAMES_HELP = ("retrieval metrics by document id: hit@k, recall@k, precision@k, mrr@k, ndcg@k, ndcg_exp@k "
              "(bare name: k=5)")
