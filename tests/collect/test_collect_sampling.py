"""Sampling rules: the rate decided on the trace id, attribute rules, the hourly cap."""
import math
import uuid

import pytest

from evaluator.collect.sampling import Condition, RuleError, Sampler, SamplingRules, parse_rule, rate_keeps


@pytest.mark.parametrize("text, expected", [
    ('metadata.env = "prod"', Condition("metadata.env", "=", "prod")),
    ("route != /health", Condition("route", "!=", "/health")),
    ("metadata.tier='gold'", Condition("metadata.tier", "=", "gold")),
    ("  user.tier   =   free  ", Condition("user.tier", "=", "free")),
    ('http.route = "a = b"', Condition("http.route", "=", "a = b")),
])
def test_a_rule_reads_key_operator_and_value(text, expected):
    assert parse_rule(text) == expected


@pytest.mark.parametrize("text", ["metadata.env", "= prod", "env ==", "env > 3", "", 'env = '])
def test_a_rule_that_cannot_be_read_says_the_form_to_write(text):
    with pytest.raises(RuleError, match=r"KEY = VALUE or KEY != VALUE"):
        parse_rule(text)


@pytest.mark.parametrize("attrs, rule, matches", [
    ({"metadata.env": "prod"}, 'metadata.env = "prod"', True),
    ({"metadata.env": "dev"}, 'metadata.env = "prod"', False),
    ({}, 'metadata.env = "prod"', False),  # absent: never equal
    ({}, "route != /health", True),  # absent: different
    ({"route": "/health"}, "route != /health", False),
    ({"retries": 3}, "retries = 3", True),  # values compared as text
    ({"cached": True}, "cached = true", True),
])
def test_a_rule_matches_the_trace_attributes(attrs, rule, matches):
    assert parse_rule(rule).matches(attrs) is matches


def test_the_rate_is_decided_on_the_trace_id_so_a_resent_trace_samples_the_same_way():
    ids = [uuid.uuid4().hex for _ in range(4000)]
    first = [rate_keeps(t, 0.25) for t in ids]
    assert first == [rate_keeps(t, 0.25) for t in ids]
    share, sd = sum(first) / len(ids), math.sqrt(0.25 * 0.75 / len(ids))
    assert abs(share - 0.25) < 4 * sd
    assert all(rate_keeps(t, 1.0) for t in ids[:50]) and not any(rate_keeps(t, 0.0) for t in ids[:50])


def test_a_lower_rate_keeps_a_subset_of_a_higher_one():
    ids = [uuid.uuid4().hex for _ in range(500)]
    assert {t for t in ids if rate_keeps(t, 0.1)} <= {t for t in ids if rate_keeps(t, 0.5)}


def test_rules_and_rate_together_and_the_attributes_used_are_kept():
    sampler = Sampler(SamplingRules.parse(1.0, ['metadata.env = "prod"', "metadata.tier != free"]))
    kept = sampler.decide("t1", {"metadata.env": "prod", "metadata.tier": "gold", "other": 1})
    assert kept.keep and kept.used == {"metadata.env": "prod", "metadata.tier": "gold"}
    refused = sampler.decide("t2", {"metadata.env": "dev"})
    assert not refused.keep and refused.reason == "rule"


def test_the_hourly_cap_counts_judged_traces_and_opens_again_next_hour():
    now = [3600.0 * 10]
    sampler = Sampler(SamplingRules.parse(1.0, max_per_hour=3), clock=lambda: now[0])
    decisions = [sampler.decide(f"t{i}", {}) for i in range(5)]
    assert [d.reason for d in decisions] == ["sampled"] * 3 + ["hourly_cap"] * 2
    now[0] += 3600
    assert sampler.decide("t9", {}).keep


@pytest.mark.parametrize("rate, cap, message", [(1.5, 0, "a share from 0 to 1"), (-0.1, 0, "a share from 0 to 1"),
                                                (0.5, -1, "0 \\(no cap\\) or more")])
def test_a_bad_rate_or_cap_is_refused(rate, cap, message):
    with pytest.raises(RuleError, match=message):
        SamplingRules.parse(rate, max_per_hour=cap)
