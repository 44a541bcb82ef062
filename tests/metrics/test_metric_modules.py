"""A metric is one module, and the built-ins come in by the plugin door.

Each built-in judged metric's prompts, verdict reader, heuristic per set, sanity fields and claims
view are defined in its own module, and no library module keys a table by a built-in metric's name
(model.py's list of the seed's metrics aside): adding a built-in metric is one module plus one line
in builtin.py. The registry holds the built-ins because `PluginGroup.register_builtin` read
`builtin.metrics` as it reads an entry point's object.
"""
import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.metrics import builtin, registry
from evaluator.metrics.heuristic_sets import HEURISTIC_SETS
from evaluator.plugins import PluginGroup
from evaluator.metrics.metric import Metric
from tests.fakes import install_plugin

PACKAGE = Path(__file__).resolve().parents[2] / "evaluator"
BUILTIN_NAMES = frozenset(m.name for m in builtin.metrics())
JUDGED = [m for m in builtin.metrics() if m.judged and m.heuristics]
# The data model's list of the seed's metrics (and EvalResult's fields) may name them.
# model.py: the row types name the built-in metrics' fields. review/exam_items.py: the judge exam is an answer key
# written by hand for each built-in judged metric (its items are built to be right or wrong for that metric), not a
# property a metric carries; a metric it does not cover is examined on a team's own labels (judge check --exam).
ALLOWED = {"model.py", "review/exam_items.py"}


def test_the_registry_holds_the_builtins_in_order_and_no_plugin_may_take_their_names():
    assert registry.BUILTINS == tuple(builtin.metrics())
    assert all(registry.METRIC_REGISTRY[m.name] is m for m in registry.BUILTINS)
    assert registry.METRIC_PLUGINS.builtin == BUILTIN_NAMES
    assert registry.DEFAULT_METRICS == tuple(m.name for m in builtin.metrics())


def test_the_builtins_are_registered_through_the_plugin_door():
    # A fresh interpreter, the metrics imported anew: every built-in came from one register_builtin call.
    code = """
import sys
from evaluator.plugins import PluginGroup
for name in [m for m in sys.modules if m.startswith("evaluator.metrics")]:
    del sys.modules[name]
calls = []
door = PluginGroup.register_builtin
def spy(self, provided):
    items = door(self, provided)
    calls.append((self.group, provided, [i.name for i in items]))
    return items
PluginGroup.register_builtin = spy
from evaluator.metrics import builtin, registry
assert [(g, p) for g, p, _ in calls] == [("ragmeter.metrics", builtin.metrics)], calls
assert calls[0][2] == list(registry.METRIC_REGISTRY), (calls, list(registry.METRIC_REGISTRY))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr


def test_builtin_metrics_is_what_an_entry_point_may_name(tmp_path, monkeypatch):
    # The same object, named by an installed distribution's entry point, loads as a plugin's would.
    monkeypatch.syspath_prepend(str(tmp_path))
    install_plugin(tmp_path, "ragmeter_again", "again = evaluator.metrics.builtin:metrics\n",
                   group="ragmeter.test_builtins")
    group = PluginGroup("ragmeter.test_builtins", "metric", Metric, {}, lambda m: m.name)
    assert group.load() == []
    assert list(group.registry.values()) == list(registry.BUILTINS)


@pytest.mark.parametrize("metric", JUDGED, ids=lambda m: m.name)
def test_a_judged_builtin_is_defined_whole_in_its_own_module(metric):
    module = importlib.import_module(f"evaluator.metrics.{metric.name}")
    assert getattr(module, metric.name.upper()) is metric
    hooks = [metric.verdicts, metric.claims, metric.offline_claims, *metric.heuristics.values()]
    assert {h.__module__ for h in hooks if h is not None} == {module.__name__}
    for lang, template in metric.prompts.items():
        assert getattr(module, f"{metric.name.upper()}_{lang.upper()}") is template
    assert metric.prose and set(metric.heuristics) <= set(HEURISTIC_SETS)


def test_the_heuristic_sets_are_views_of_the_registered_metrics():
    for table in HEURISTIC_SETS.values():
        assert list(table) == [m.name for m in JUDGED]


def keyed_by_metric_name(source: str, names=BUILTIN_NAMES) -> list:
    """(line, name) of each dict key, or dict() keyword, that spells one of `names`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            found += [(k.lineno, k.value) for k in node.keys
                      if isinstance(k, ast.Constant) and k.value in names]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            found += [(node.lineno, k.arg) for k in node.keywords if k.arg in names]
    return found


def test_no_library_module_keys_a_table_by_a_builtin_metric_name():
    found = [f"{path.relative_to(PACKAGE.parent)}:{line}: {name!r}"
             for path in sorted(PACKAGE.rglob("*.py")) if str(path.relative_to(PACKAGE)) not in ALLOWED
             for line, name in keyed_by_metric_name(path.read_text(encoding="utf-8"))]
    assert found == [], "ask the Metric (evaluator/metrics/<name>.py) instead:\n" + "\n".join(found)


def test_the_key_check_sees_a_table():
    source = 'READS = {"faithfulness": ("answer",)}\nOTHER = dict(context_recall=1, shape=2)\nOK = {"x": 1}\n'
    assert keyed_by_metric_name(source) == [(1, "faithfulness"), (2, "context_recall")]
