"""Exports of a run (the Report's downloads, `ragmeter export`): a metric reviewed fewer than five times gets no interval, only its count."""
from types import SimpleNamespace

from evaluator.service.exports import reviewed_line


def test_fewer_than_five_reviews_give_no_interval():
    assert reviewed_line(SimpleNamespace(n_reviews=1)) == "1 review: too few reviews for an interval"
    assert reviewed_line(SimpleNamespace(n_reviews=4)) == "4 reviews: too few reviews for an interval"
