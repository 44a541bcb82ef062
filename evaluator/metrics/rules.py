"""Rule-based metrics: deterministic scores computed from the sample alone, no judge."""
from __future__ import annotations

from typing import List

from ..model import METHOD_RULE, EvalSample, MetricScore
from ..text import words


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
