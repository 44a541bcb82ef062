import math

import pytest

from evaluator.metrics.geval import score_position, weighted_score


def lp(p):
    return math.log(p)


def test_the_score_token_is_the_one_after_score_not_a_digit_in_the_reasoning():
    tokens = ['{"', "reasoning", '":', ' "', "4", " claims", '",', ' "', "score", '":', " ", "2", "}"]
    assert score_position(tokens, "1-5") == 11
    assert score_position(["4"], "1-5") == 0 and score_position(["The", " answer"], "1-5") is None


@pytest.mark.parametrize("alternatives, stated, expected", [
    ([["4", lp(0.6)], ["3", lp(0.3)], ["5", lp(0.1)]], 4.0, (3.8 - 1) / 4),
    ([["4", lp(0.5)], [" 4", lp(0.2)], ["x", lp(0.3)]], 4.0, 0.75),  # non-score tokens carry no weight
    ([["4", lp(0.9)]], 3.0, None),  # the token disagrees with the parsed score: keep the stated one
])
def test_weighting_over_score_tokens(alternatives, stated, expected):
    logprobs = [['{"score": ', [['{"score": ', 0.0]]], ["4", alternatives], ["}", [["}", 0.0]]]]
    got = weighted_score(logprobs, stated, "1-5")
    assert got == (None if expected is None else pytest.approx(expected))


def test_no_logprobs_or_a_0_1_scale_gives_none():
    assert weighted_score(None, 4.0, "1-5") is None
    assert weighted_score([["0.8", [["0.8", 0.0]]]], 0.8, "0-1") is None
