"""The built-in metrics: the five judged ones and the two rule-based ones, one entry each.

Each entry names everything about its metric: the sample fields it needs, its prompts (named
constants in prompts.py), how its reply becomes a score (a verdict reader in parsing.py), its
heuristic (heuristics.py, in the evaluator's chosen set) and the advice shown when it is low.
"""
from __future__ import annotations


from . import prompts as p
from .sanity import sane_heuristic
from .metric import RULE, Heuristic, Metric, advice
from .parsing import attributed_statements, correctness_f1, supported_claims, useful_contexts
from .rules import sample_expected_doc_recall, sample_keyword_coverage
from .tools import AGENT_METRICS


def from_heuristic_set(name: str) -> Heuristic:
    """The heuristic of metric `name` in whichever heuristic set the evaluator uses (garbage capped,
    see sanity.py)."""
    def score(sample, lang: str, kind: str):
        return sane_heuristic(name, sample, lang, kind)
    return score



FAITHFULNESS = Metric(
    "faithfulness",
    needs=("answer", "contexts"),
    prompts={"en": p.FAITHFULNESS_EN, "ar": p.FAITHFULNESS_AR},
    shows=("question", "contexts", "answer"),
    verdicts=supported_claims,
    heuristic=from_heuristic_set("faithfulness"),
    advice=advice("Hallucination: answers state things the retrieved documents do not support.",
                   "Tell the model to answer only from the documents provided.",
                   "Ask it to say it does not know when the documents do not contain the answer."),
    description="Share of the answer's claims that the retrieved contexts support.",
)

ANSWER_RELEVANCY = Metric(
    "answer_relevancy",
    zero_if_empty=("answer",),
    prompts={"en": p.ANSWER_RELEVANCY_EN, "ar": p.ANSWER_RELEVANCY_AR},
    shows=("question", "answer"),
    heuristic=from_heuristic_set("answer_relevancy"),
    advice=advice("The prompt drifts: answers do not address the question that was asked.",
                   "Improve the prompt so it restates the question and asks for a direct answer.",
                   "Add a system prompt that keeps the model on the user's question."),
    description="How directly and completely the answer addresses the question.",
)

CONTEXT_PRECISION = Metric(
    "context_precision",
    needs=("contexts",),  # no contexts is N/A, not a precision of 0 (a chat turn without retrieval)
    prompts={"en": p.CONTEXT_PRECISION_EN, "ar": p.CONTEXT_PRECISION_AR},
    shows=("question", "ground_truth", "contexts"),  # the reference is shown only when there is one
    verdicts=useful_contexts,
    heuristic=from_heuristic_set("context_precision"),
    advice=advice("Noisy retrieval: many retrieved contexts are irrelevant to the question.",
                   "Rerank the retrieved chunks (for example with a cross-encoder) before answering.",
                   "Lower top_k so fewer irrelevant chunks reach the model.",
                   "Use hybrid search (keyword + vector) to rank relevant chunks first."),
    description="Whether the useful contexts are ranked first (average precision).",
)

CONTEXT_RECALL = Metric(
    "context_recall",
    needs=("ground_truth", "contexts"),  # no contexts is N/A with its reason, never a silent 0
    prompts={"en": p.CONTEXT_RECALL_EN, "ar": p.CONTEXT_RECALL_AR},
    shows=("question", "contexts", "ground_truth"),
    verdicts=attributed_statements,
    heuristic=from_heuristic_set("context_recall"),
    advice=advice("Retrieval misses: the retrieved contexts lack facts the reference answer needs.",
                   "Raise top_k so more candidate chunks reach the model.",
                   "Revisit chunking (chunk size and overlap) so facts are not split across chunks.",
                   "Add metadata filters so retrieval searches the right documents."),
    description="Share of the reference answer's statements found in the contexts.",
)

ANSWER_CORRECTNESS = Metric(
    "answer_correctness",
    needs=("ground_truth",),
    zero_if_empty=("answer",),
    prompts={"en": p.ANSWER_CORRECTNESS_EN, "ar": p.ANSWER_CORRECTNESS_AR},
    shows=("question", "answer", "ground_truth"),
    verdicts=correctness_f1,
    heuristic=from_heuristic_set("answer_correctness"),
    advice=advice("Wrong facts: answers disagree with the reference answers.",
                   "Improve retrieval so the right facts reach the model (see context recall).",
                   "Improve grounding: instruct the model to answer from the documents only.",
                   "Check the reference answers themselves; outdated or wrong references lower this score."),
    description="Agreement of the answer with the reference (F1 over TP/FP/FN claims).",
)

KEYWORD_COVERAGE = Metric(
    "keyword_coverage",
    kind=RULE,
    needs=("expected_answer_keywords",),
    zero_if_empty=("answer",),  # reads the answer: a row without one is N/A (an empty one covers nothing)
    rule=sample_keyword_coverage,
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
    advice=advice("Retrieval misses the documents expected for these questions.",
                   "Raise top_k or revisit chunking so the expected documents are retrieved.",
                   "Add metadata filters or hybrid search so the right documents rank first."),
    description="Share of the expected documents among the retrieved contexts.",
)

# Registry order is display order: the five judged metrics, the rule-based ones, then the agent ones
# (tools.py; they appear only on rows with tool calls or expected tools).
BUILTINS = (FAITHFULNESS, ANSWER_RELEVANCY, CONTEXT_PRECISION, CONTEXT_RECALL, ANSWER_CORRECTNESS,
            KEYWORD_COVERAGE, EXPECTED_DOC_RECALL, *AGENT_METRICS)
