"""The one entry-point loader: a new plugin kind is a PluginGroup over a dict, loaded from a real installed dist.

Judges and metrics use the same group (tests/judges/test_judge_plugins.py, tests/metrics/test_plugins.py).
"""
from dataclasses import dataclass
from functools import partial

import pytest

from evaluator.judges import registry as judges
from evaluator.metrics import registry as metrics
from evaluator.plugins import PluginGroup
from fakes import install_plugin

GROUP = "ragmeter.test_formats"


@dataclass(frozen=True)
class Format:
    name: str


MODULE = f'''
from {__name__} import Format
ONE = Format("yaml")
def many():
    return [Format("toml"), Format("ini")]
NOT_A_FORMAT = 42
'''


install = partial(install_plugin, group=GROUP, code=MODULE)


@pytest.fixture
def group(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "ragmeter_formats", raising=False)
    registry = {"csv": Format("csv")}
    return tmp_path, PluginGroup(GROUP, "format", Format, registry, lambda f: f.name, builtin=frozenset(registry))


def test_one_item_a_list_or_a_function_all_register(group):
    site, formats = group
    install(site, "ragmeter_formats", "one = ragmeter_formats:ONE\nmany = ragmeter_formats:many\n",
            module="ragmeter_formats")
    assert formats.find("yaml") == Format("yaml")  # a miss loads the plugins, once
    assert formats.names() == ["csv", "yaml", "toml", "ini"] and formats.load() == [] and formats.hint() == ""


def test_wrong_objects_missing_modules_and_builtin_names_are_reported_not_raised(group):
    site, formats = group
    install(site, "ragmeter_formats", "bad = ragmeter_formats:NOT_A_FORMAT\ngone = no_such_module:X\n",
            module="ragmeter_formats")
    install(site, "ragmeter_thief", f"thief = {__name__}:CSV_AGAIN\n")
    problems = formats.load()
    assert any("format plugin 'bad'" in p and "int" in p for p in problems)
    assert any("format plugin 'gone'" in p and "no_such_module" in p for p in problems)
    assert any("format plugin 'thief'" in p and "built-in" in p for p in problems)
    assert formats.find("nope") is None and "no_such_module" in formats.hint()
    assert formats.registry == {"csv": Format("csv")}


CSV_AGAIN = Format("csv")


def test_register_refuses_a_taken_name_and_the_wrong_kind(group):
    _, formats = group
    with pytest.raises(ValueError, match="already registered; pass replace=True"):
        formats.register(Format("csv"))
    with pytest.raises(TypeError, match="takes a Format, not str"):
        formats.register("csv")  # type: ignore[arg-type]
    assert formats.register(Format("csv"), replace=True) is formats.registry["csv"]


def test_judges_and_metrics_load_through_the_one_group():
    assert isinstance(judges.JUDGE_PLUGINS, PluginGroup) and judges.JUDGE_PLUGINS.registry is judges.JUDGE_REGISTRY
    assert isinstance(metrics.METRIC_PLUGINS, PluginGroup)
    assert metrics.METRIC_PLUGINS.registry is metrics.METRIC_REGISTRY
    assert judges.JUDGE_PLUGINS.builtin == {"offline", "openai"}
