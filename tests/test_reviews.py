"""Reviews in the run history (SQLite and PostgreSQL): record, change, several reviewers, scales checked,
surviving a restart."""
import pytest

from evaluator.errors import HistoryError, ReviewError
from evaluator.store.history import RunStore
from evaluator.model import EvalResult, EvalSample, MetricScore
from evaluator.store.reviews import Review, ReviewStore, judge_settings


def make_run(store, scores=(0.9, 0.2, 0.6)):
    samples = [EvalSample(f"q{i}", f"a{i}", [f"c{i}"], sample_id=f"s{i}") for i in range(len(scores))]
    run_id = store.create_run(dataset_name="d", samples=samples,
                              settings={"judge": "openai", "model": "m1", "api_key": "sk-secret", "temperature": 0})
    for i, v in enumerate(scores):
        store.record_result(run_id, i, EvalResult(f"s{i}", sample=samples[i],
                                                  scores={"faithfulness": MetricScore("faithfulness", v, method="llm")}))
    return run_id


@pytest.fixture(params=["sqlite", "postgresql"])
def path(request, tmp_path):
    """The same tests on a SQLite file and on a fresh database of a real PostgreSQL server."""
    if request.param == "sqlite":
        return tmp_path / "history.sqlite3"
    return request.getfixturevalue("postgres_url")


def test_a_review_survives_a_restart_and_a_second_look_replaces_the_first(path):
    runs = RunStore(path)
    run_id = make_run(runs)
    judge = judge_settings(runs.get_run(run_id))
    assert judge == {"judge": "openai", "model": "m1", "temperature": 0}
    ReviewStore(runs).record(Review(run_id, 1, "faithfulness", "disagree", "ana", corrected=0.7, note="fine",
                                    judge_score=0.2, judge=judge))
    runs.close()

    reopened = ReviewStore(RunStore(path))
    (review,) = reopened.reviews(run_id)
    assert (review.index, review.verdict, review.corrected, review.note, review.judge) == (1, "disagree", 0.7, "fine", judge)
    assert review.created_at
    reopened.record(Review(run_id, 1, "faithfulness", "agree", "ana", judge_score=0.2))
    (changed,) = reopened.reviews(run_id)
    assert (changed.verdict, changed.corrected, changed.human_score) == ("agree", None, 0.2)


def test_several_reviewers_review_one_sample(path):
    store = ReviewStore(RunStore(path))
    run_id = make_run(store.runs)
    store.record(Review(run_id, 0, "faithfulness", "agree", "ana", judge_score=0.9))
    store.record(Review(run_id, 0, "faithfulness", "disagree", "bo", corrected=0.5, judge_score=0.9))
    assert [r.reviewer for r in store.reviews(run_id)] == ["ana", "bo"]
    assert store.reviewed_indices(run_id, "faithfulness") == {0: 2}
    assert store.reviews(run_id, reviewer="bo")[0].human_score == 0.5
    assert store.remove(run_id, 0, "faithfulness", "bo") and not store.remove(run_id, 0, "faithfulness", "bo")


@pytest.mark.parametrize("corrected, scale, human", [(4, "1-5", 0.75), (1, "pass-fail", 1.0), (0.3, "0-1", 0.3)])
def test_a_corrected_score_is_kept_on_the_metric_scale(path, corrected, scale, human):
    store = ReviewStore(RunStore(path))
    run_id = make_run(store.runs)
    store.record(Review(run_id, 2, "faithfulness", "disagree", "ana", corrected=corrected, scale=scale))
    (review,) = store.reviews(run_id)
    assert (review.corrected, review.scale, review.human_score) == (corrected, scale, human)


@pytest.mark.parametrize("kwargs, message", [
    ({"verdict": "maybe"}, "verdict must be 'agree' or 'disagree'"),
    ({"reviewer": "  "}, "needs a reviewer name"),
    ({"corrected": 7, "scale": "1-5"}, "off the metric's 1-5 scale: give a score between 1 and 5"),
    ({"corrected": 0.5, "scale": "pass-fail"}, r"1 \(pass\) or 0 \(fail\)"),
])
def test_bad_reviews_are_refused_with_what_to_change(kwargs, message):
    fields = {"run_id": "r", "index": 0, "metric": "faithfulness", "verdict": "disagree", "reviewer": "ana", **kwargs}
    with pytest.raises(ReviewError, match=message):
        Review(**fields)


def test_a_review_of_an_unknown_run_is_refused(path):
    with pytest.raises(HistoryError, match="No run with id 'nope'"):
        ReviewStore(RunStore(path)).record(Review("nope", 0, "faithfulness", "agree", "ana"))


def test_deleting_a_run_deletes_its_reviews(path):
    store = ReviewStore(RunStore(path))
    run_id = make_run(store.runs)
    store.record(Review(run_id, 0, "faithfulness", "agree", "ana"))
    store.runs.delete_run(run_id)
    assert store.runs._query("SELECT COUNT(*) FROM reviews") == [(0,)]


def test_the_store_refuses_a_viewers_review_in_team_mode(tmp_path):
    """The check sits at the write: a viewer's review never reaches the table, whatever page sent it."""
    from evaluator.team.access import Access
    from evaluator.config import RolesConfig
    from evaluator.errors import NotAllowed

    runs = RunStore(tmp_path / "history.sqlite3")
    run_id = make_run(runs)
    roles = RolesConfig(viewers=("*",), evaluators=("eve@example.com",))
    viewer = ReviewStore(runs, access=Access("vera@example.com", roles, team=True))
    with pytest.raises(NotAllowed, match="vera@example.com may not save reviews"):
        viewer.record(Review(run_id, 0, "faithfulness", "disagree", "vera@example.com", judge_score=0.9))
    with pytest.raises(NotAllowed):
        viewer.remove(run_id, 0, "faithfulness", "eve@example.com")
    assert viewer.reviews(run_id) == []  # reading is still allowed
    evaluator = ReviewStore(runs, access=Access("eve@example.com", roles, team=True))
    evaluator.record(Review(run_id, 0, "faithfulness", "agree", "eve@example.com", judge_score=0.9))
    assert [r.reviewer for r in viewer.reviews(run_id)] == ["eve@example.com"]
