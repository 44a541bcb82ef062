"""One decision per metric in one vocabulary (analysis/decision.py), and who scored a run (store/naming.py)."""
from __future__ import annotations

import pytest

from evaluator.analysis.decision import NOT_COMPARABLE, comparability, decide
from evaluator.analysis.provenance import scorer_differences
from evaluator.store.naming import clean_name, default_name, scorer_label

OFFLINE = {"judge": "offline", "heuristics": "ragmeter"}
JUDGE = {"judge": "openai", "model": "gpt-4o-mini", "base_url": "https://user:key@api.example.com/v1?key=SECRET"}


@pytest.mark.parametrize("settings, label", [
    (OFFLINE, "offline heuristics (default)"),
    ({"judge": "offline", "heuristics": "jaccard"}, "offline heuristics (jaccard)"),
    ({"judge": "offline", "heuristics": "embedding"}, "offline heuristics (embedding)"),
    ({}, "offline heuristics (default)"),  # a run saved before the settings were recorded
    (JUDGE, "gpt-4o-mini at api.example.com"),  # the host only: never a user, key, path or query
    ({"judge": "openai", "model": "gpt-4o"}, "gpt-4o"),
])
def test_a_scorer_is_labelled_by_model_and_host_or_heuristic_set(settings, label):
    assert scorer_label(settings) == label


@pytest.mark.parametrize("a, b, reason", [
    (OFFLINE, {**OFFLINE, "heuristics": "jaccard"}, "scored by different heuristics (default vs jaccard)"),
    (OFFLINE, JUDGE, "scored by different scorers (offline heuristics (default) vs gpt-4o-mini at api.example.com)"),
    (JUDGE, {**JUDGE, "model": "gpt-4o"},
     "scored by different scorers (gpt-4o-mini at api.example.com vs gpt-4o at api.example.com)"),
    ({**JUDGE, "language": "auto"}, {**JUDGE, "language": "ar"}, "scored with different settings (language auto vs ar)"),
])
def test_runs_scored_differently_are_not_comparable_and_say_how(a, b, reason):
    found = comparability(a, b, scorer_differences(a, b))
    assert not found.comparable and not found.judged and found.reason == reason
    assert found.headline().startswith(f"not comparable: {found.reason}")
    assert decide(-0.4, 0.0001, 0.05, found.judged) == NOT_COMPARABLE


def test_verdicts_across_scorers_only_when_allowed():
    allowed = comparability(OFFLINE, JUDGE, scorer_differences(OFFLINE, JUDGE), allowed=True)
    assert allowed.judged and not allowed.comparable
    assert allowed.headline().startswith("compared across scorers (--allow-different-scorers): scored by")
    assert comparability(OFFLINE, dict(OFFLINE), []).headline() == ""


@pytest.mark.parametrize("delta, p, word", [
    (-0.2, 0.001, "worse"), (0.2, 0.001, "better"), (0.2, 0.2, "no clear change"), (0.0, 0.0, "no clear change"),
    (None, None, "not comparable"),  # no pair scored in both
])
def test_one_word_per_metric(delta, p, word):
    assert decide(delta, p, 0.05) == word


def test_a_default_name_says_dataset_scorer_and_minute():
    assert default_name("faq.jsonl", OFFLINE, "2026-12-06T15:20:41+00:00") == \
        "faq.jsonl · offline heuristics (default) · 2026-12-06 15:20"


@pytest.mark.parametrize("typed, kept", [
    ("  v2 prompt  ", "v2 prompt"), ("", None), ("   ", None), (None, None),
    ("<b>x</b>\n**y**", "<b>x</b> **y**"),  # one line; HTML and Markdown kept as text for the views to escape
    ("abc\u202edef\u2066 مقارنة", "abcdef مقارنة"),  # bidi controls dropped, Arabic kept
    ("tab\there\x07", "tab here"),
])
def test_a_typed_name_becomes_one_plain_line(typed, kept):
    assert clean_name(typed) == kept


def test_a_name_over_120_characters_is_refused_with_its_length():
    with pytest.raises(Exception, match="300 characters long; a name may have at most 120"):
        clean_name("n" * 300)
    assert clean_name("n" * 120) == "n" * 120
