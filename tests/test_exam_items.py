"""The built-in judge exam needs meaning: enough items per metric in two languages, labels balanced in every
cell of word overlap, heuristics that count words near chance, and no exam item ever shown to a judge."""
import importlib.util

import pytest

from fakes import ScriptedJudge

from evaluator.metrics.heuristics import jaccard
from evaluator.metrics.registry import get_metric
from evaluator.model import EvalSample
from evaluator.review.alignment import build_example_set
from evaluator.review.exam import ConstantJudge, RandomJudge, take_exam
from evaluator.review.exam_items import EXAM_METRICS, builtin_exam, generate, is_exam_sample
from evaluator.scoring.evaluation import RAGEvaluator
from evaluator.store.history import RunStore
from evaluator.store.reviews import Review, ReviewStore
from evaluator.text import words

ITEMS = builtin_exam()
HEURISTIC_SETS = ["ragmeter", "jaccard"] + (["embedding"] if importlib.util.find_spec("onnxruntime") else [])


def of(metric):
    return [i for i in ITEMS if i.metric == metric]


@pytest.mark.parametrize("metric", EXAM_METRICS)
def test_every_metric_has_100_items_a_third_arabic_half_good_in_every_overlap_cell(metric):
    items = of(metric)
    assert len(items) >= 100
    assert sum(i.lang == "ar" for i in items) * 3 >= len(items)
    cells = {(label, overlap): sum(1 for i in items if (i.label, i.overlap) == (label, overlap))
             for label in (0, 1) for overlap in ("high", "low")}
    assert len(set(cells.values())) == 1, cells  # as many good as bad items at each level of word overlap
    assert len({i.item_id for i in items}) == len(items)


def test_the_same_seed_gives_the_same_items_and_another_seed_other_choices():
    assert [(i.item_id, i.sample.answer, i.sample.contexts) for i in generate(3)] == \
        [(i.item_id, i.sample.answer, i.sample.contexts) for i in generate(3)]
    assert [i.sample.contexts for i in generate(3)] != [i.sample.contexts for i in generate(4)]


def balanced_accuracy(pairs):
    good = [s for s, label in pairs if label]
    bad = [s for s, label in pairs if not label]
    return (sum(s >= 0.5 for s in good) / len(good) + sum(s < 0.5 for s in bad) / len(bad)) / 2


@pytest.mark.parametrize("kind", HEURISTIC_SETS)
@pytest.mark.parametrize("metric", EXAM_METRICS)
def test_heuristics_that_count_words_score_near_chance(kind, metric):
    scorer = get_metric(metric).heuristic
    pairs = [(scorer(i.sample, i.lang, kind).score, i.label) for i in of(metric)]
    assert balanced_accuracy(pairs) <= 0.65


@pytest.mark.parametrize("metric", EXAM_METRICS)
def test_word_overlap_does_not_tell_the_labels_apart(metric):
    """The mean Jaccard overlap of what the metric compares is about the same for good and bad items."""
    def overlap(item):
        s = item.sample
        left = s.question if metric == "answer_relevancy" else (s.ground_truth if metric.startswith("context")
                                                                else s.answer)
        right = s.answer if metric == "answer_relevancy" else (s.ground_truth if metric == "answer_correctness"
                                                               else " ".join(s.contexts))
        return jaccard(words(left), words(right))
    means = [sum(overlap(i) for i in of(metric) if i.label == label) / (len(of(metric)) / 2) for label in (0, 1)]
    assert abs(means[0] - means[1]) <= 0.1, means


@pytest.mark.parametrize("judge", [ConstantJudge(1.0), ConstantJudge(0.0), RandomJudge()])
def test_constant_and_random_judges_are_at_chance_and_unusable(judge):
    result = take_exam(judge, ITEMS)
    assert result.verdict == "unusable"
    assert all(abs(m.balanced_accuracy - 0.5) <= 0.08 and m.kappa < 0.2 for m in result.metrics)


def test_no_built_in_prompt_carries_an_exam_item():
    """Scoring a sample that is not in the exam sends prompts holding none of the exam's texts."""
    judge = ScriptedJudge('{"score": 0.5, "reasoning": "r", "verdicts": []}')
    sample = EvalSample("How long is the warranty?", "Two years.", ["The warranty lasts two years."],
                        ground_truth="Two years.")
    RAGEvaluator(judge, language="en", metrics=list(EXAM_METRICS)).evaluate_dataset([sample])
    assert judge.prompts
    texts = {t for i in ITEMS for t in (i.sample.answer, *i.sample.contexts) if len(t) > 20}
    assert not [t for t in texts for p in judge.prompts if t in p]


def test_reviewed_exam_items_never_become_few_shot_examples(tmp_path):
    runs = RunStore(tmp_path / "h.sqlite3")
    exam = [i.sample for i in of("answer_relevancy")[:3]]
    other = [EvalSample(f"Question {i}?", f"Answer {i}.", [f"Context {i}."], sample_id=f"s{i}") for i in range(2)]
    samples = exam + other
    report = RAGEvaluator(ScriptedJudge('{"score": 0.9, "reasoning": "fine"}'), language="en",
                          metrics=["answer_relevancy"]).evaluate_dataset(samples)
    run_id = runs.create_run(dataset_name="d", samples=samples, settings={"judge": "openai", "model": "m"})
    for i, result in enumerate(report.results):
        runs.record_result(run_id, i, result)
    reviews = ReviewStore(runs)
    for i in range(len(samples)):
        reviews.record(Review(run_id, i, "answer_relevancy", "disagree", "ana", corrected=0.1, judge_score=0.9))
    shown = build_example_set(reviews, run_id, limit=10).examples["answer_relevancy"]
    assert all(is_exam_sample(s) for s in exam)
    assert [e.question for e in shown] and not [e for e in shown if e.question in {s.question for s in exam}]
