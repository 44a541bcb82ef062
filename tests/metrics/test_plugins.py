"""Metric plugins: a distribution installed on sys.path registers metrics under `ragmeter.metrics`."""
from functools import partial

import pytest

from evaluator import EvalSample, OfflineJudge, RAGEvaluator
from evaluator.metrics import registry
from evaluator.metrics.registry import get_metric, known_metrics, load_plugins, plugin_errors
from tests.fakes import ScriptedJudge, install_plugin, plugin_site

PLUGIN_MODULE = '''
from evaluator.metrics.registry import Metric
from evaluator.metrics.rubric import RubricMetric

def metrics():
    return [RubricMetric("shouting", "The answer does not shout (no ALL CAPS)."),
            Metric("answer_length", kind="rule", needs=("answer",), rule=_length)]

def _length(sample):
    from evaluator.model import MetricScore
    return MetricScore("answer_length", min(1.0, len(sample.answer) / 100), "length / 100", method="rule")
'''


install = partial(install_plugin, group=registry.PLUGIN_GROUP, code=PLUGIN_MODULE)


@pytest.fixture
def site(tmp_path, monkeypatch):
    modules = ("ragmeter_shouting", "ragmeter_broken")
    with plugin_site(tmp_path, monkeypatch, registry.METRIC_PLUGINS, modules) as folder:
        yield folder


def test_an_installed_plugin_metric_can_be_chosen_by_name(site):
    install(site, "ragmeter_shouting", "shouting = ragmeter_shouting:metrics\n", module="ragmeter_shouting")
    assert load_plugins(reload=True) == []
    assert {"shouting", "answer_length"} <= set(known_metrics())
    sample = EvalSample("q?", "A calm answer.", ["ctx"], sample_id="s1")
    judge = ScriptedJudge('{"score": 0.9, "reasoning": "calm"}')
    result = RAGEvaluator(judge, metrics=["faithfulness", "shouting", "answer_length"]).evaluate(sample)
    assert result.scores["shouting"].score == 0.9 and judge.calls == 2
    assert result.scores["answer_length"].score == pytest.approx(0.14)
    offline = RAGEvaluator(OfflineJudge(), metrics=["shouting"]).evaluate(sample)
    assert offline.scores["shouting"].skipped


def test_a_broken_plugin_is_reported_not_fatal(site):
    install(site, "ragmeter_broken", "broken = ragmeter_broken:METRICS\n", module="ragmeter_broken",
            code="raise ImportError('needs numpy 9')\n")
    install(site, "ragmeter_thief", "thief = evaluator.metrics.builtin:FAITHFULNESS\n")
    problems = load_plugins(reload=True)
    assert any("'broken'" in p and "needs numpy 9" in p for p in problems)
    assert any("'thief'" in p and "built-in" in p for p in problems)
    assert get_metric("faithfulness") is registry.BUILTINS[0]
    with pytest.raises(ValueError) as err:
        get_metric("broken_metric")
    assert "needs numpy 9" in str(err.value) and plugin_errors() == problems
