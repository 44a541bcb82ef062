"""What to do about a low metric: the reading guide printed beside every report."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Tuple

from .bands import band

DEFAULT_THRESHOLD = 0.7


@dataclass(frozen=True)
class Advice:
    """Why a metric is low and what to try, for one metric."""

    metric: str
    score: float
    band: str
    diagnosis: str
    actions: List[str] = field(default_factory=list)


# metric -> (diagnosis, actions). Each diagnosis names the failure the metric detects.
PLAYBOOK: Dict[str, Tuple[str, List[str]]] = {
    "context_recall": (
        "Retrieval misses: the retrieved contexts lack facts the reference answer needs.",
        [
            "Raise top_k so more candidate chunks reach the model.",
            "Revisit chunking (chunk size and overlap) so facts are not split across chunks.",
            "Add metadata filters so retrieval searches the right documents.",
        ],
    ),
    "answer_relevancy": (
        "The prompt drifts: answers do not address the question that was asked.",
        [
            "Improve the prompt so it restates the question and asks for a direct answer.",
            "Add a system prompt that keeps the model on the user's question.",
        ],
    ),
    "faithfulness": (
        "Hallucination: answers state things the retrieved documents do not support.",
        [
            "Tell the model to answer only from the documents provided.",
            "Ask it to say it does not know when the documents do not contain the answer.",
        ],
    ),
    "context_precision": (
        "Noisy retrieval: many retrieved contexts are irrelevant to the question.",
        [
            "Rerank the retrieved chunks (for example with a cross-encoder) before answering.",
            "Lower top_k so fewer irrelevant chunks reach the model.",
            "Use hybrid search (keyword + vector) to rank relevant chunks first.",
        ],
    ),
    "answer_correctness": (
        "Wrong facts: answers disagree with the reference answers.",
        [
            "Improve retrieval so the right facts reach the model (see context recall).",
            "Improve grounding: instruct the model to answer from the documents only.",
            "Check the reference answers themselves; outdated or wrong references lower this score.",
        ],
    ),
    "keyword_coverage": (
        "Answers leave out the expected key terms.",
        [
            "Check whether the retrieved contexts contain the expected terms (see context recall).",
            "Ask the model for complete answers that keep the documents' terminology.",
        ],
    ),
    "expected_doc_recall": (
        "Retrieval misses the documents expected for these questions.",
        [
            "Raise top_k or revisit chunking so the expected documents are retrieved.",
            "Add metadata filters or hybrid search so the right documents rank first.",
        ],
    ),
}


def recommendations(mean_scores: Mapping[str, Optional[float]],
                    threshold: float = DEFAULT_THRESHOLD) -> List[Advice]:
    """Advice for each metric whose mean is below `threshold`, worst first.

    Metrics without a mean (None: nothing scored) and metrics without a playbook entry are left out.
    """
    low = [(name, score) for name, score in mean_scores.items()
           if score is not None and score < threshold and name in PLAYBOOK]
    low.sort(key=lambda item: item[1])
    return [Advice(name, score, band(score), PLAYBOOK[name][0], list(PLAYBOOK[name][1])) for name, score in low]
