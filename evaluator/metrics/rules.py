"""The rule-based built-in metrics, keyword coverage and expected-document recall: deterministic
scores computed from the sample alone, no judge. Each is one Metric below (its rule, what it needs,
its advice), registered with the others (builtin.py)."""
from __future__ import annotations

from typing import List

from ..model import METHOD_RULE, EvalSample, MetricScore
from ..text import words
from .metric import RULE, Metric, advice


def keyword_coverage(answer: str, keywords: List[str]) -> MetricScore:
    """Fraction of expected keywords found in the answer (case-insensitive, whole words)."""
    text = " " + " ".join(words(answer)) + " "
    found = [k for k in keywords if " " + " ".join(words(k)) + " " in text]
    missing = [k for k in keywords if k not in found]
    score = len(found) / len(keywords) if keywords else 0.0
    reasoning = f"{len(found)}/{len(keywords)} expected keywords in the answer"
    reasoning += f"; missing: {', '.join(missing)}." if missing else "."
    return MetricScore("keyword_coverage", round(score, 4), reasoning, method=METHOD_RULE)


def expected_doc_recall(contexts: List[str], expected_docs: List[str]) -> MetricScore:
    """Fraction of expected document titles among the retrieved contexts' titles.

    A context's title is how it begins ("Title: text", "Title\\ntext" or the title alone), compared
    word by word, case-insensitively, so punctuation and spacing do not matter.
    """
    heads = [" ".join(words(c)) + " " for c in contexts]
    found = [d for d in expected_docs if any(h.startswith(" ".join(words(d)) + " ") for h in heads)]
    missing = [d for d in expected_docs if d not in found]
    score = len(found) / len(expected_docs) if expected_docs else 0.0
    reasoning = f"{len(found)}/{len(expected_docs)} expected documents retrieved"
    reasoning += f"; missing: {', '.join(missing)}." if missing else "."
    return MetricScore("expected_doc_recall", round(score, 4), reasoning, method=METHOD_RULE)


def sample_keyword_coverage(sample: EvalSample) -> MetricScore:
    return keyword_coverage(sample.answer, sample.expected_answer_keywords or [])


def sample_expected_doc_recall(sample: EvalSample) -> MetricScore:
    return expected_doc_recall(sample.contexts, sample.expected_docs or [])


KEYWORD_COVERAGE = Metric(
    "keyword_coverage",
    kind=RULE,
    needs=("expected_answer_keywords",),
    zero_if_empty=("answer",),  # reads the answer: a row without one is N/A (an empty one covers nothing)
    rule=sample_keyword_coverage,
    default=True,  # costs no judge call; left out of a row without keywords
    advice=advice("Answers leave out the expected key terms.",
                   "Check whether the retrieved contexts contain the expected terms (see context recall).",
                   "Ask the model for complete answers that keep the documents' terminology."),
    description="Share of the expected keywords found in the answer.",
)

EXPECTED_DOC_RECALL = Metric(
    "expected_doc_recall",
    kind=RULE,
    needs=("expected_docs",),
    rule=sample_expected_doc_recall,
    default=True,  # costs no judge call; left out of a row without expected documents
    advice=advice("Retrieval misses the documents expected for these questions.",
                   "Raise top_k or revisit chunking so the expected documents are retrieved.",
                   "Add metadata filters or hybrid search so the right documents rank first."),
    description="Share of the expected documents among the retrieved contexts.",
)
