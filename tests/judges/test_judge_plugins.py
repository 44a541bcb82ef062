"""Judge plugins: a distribution installed on sys.path registers judges under `ragmeter.judges`.

The `echo` judge below implements nothing but `generate(prompt) -> str`; ragmeter's wrapper gives
it the cache, retries and usage counting, from the CLI and from the dashboard alike.
"""
import json
import sys
from functools import partial

import pytest

from evaluator.cli.command import main
from evaluator.errors import JudgeConfigError
from evaluator.store.history import RunStore
from evaluator.report.export import report_from_json
from evaluator.judges import registry
from evaluator.judges.registry import judge_kinds, judge_plugin_errors, load_judge_plugins
from evaluator.judges.resilient import ResilientJudge
from evaluator.runs.run import RunConfig
from fakes import install_plugin, plugin_site

PLUGIN = '''
import json
import threading

from evaluator.judges.registry import JudgeEntry

CALLS = []  # every prompt generate() was asked, failed attempts included
_SEEN = set()
_LOCK = threading.Lock()


class Hiccup(Exception):
    """What the flaky echo raises the first time it sees a prompt; asks for no wait."""
    retry_after = 0.0


class Echo:
    name = "echo"

    def __init__(self, flaky=False):
        self.flaky = flaky

    def generate(self, prompt):
        with _LOCK:
            CALLS.append(prompt)
            first = prompt not in _SEEN
            _SEEN.add(prompt)
        if self.flaky and first:
            raise Hiccup("the echo hiccupped")
        return json.dumps({"score": 0.75, "reasoning": "echo heard %d characters" % len(prompt)})


def judges():
    return [JudgeEntry("echo", "Echo judge", lambda config, key: Echo()),
            JudgeEntry("flaky_echo", "Flaky echo", lambda config, key: Echo(flaky=True))]
'''

ROWS = [
    {"question": "How long is the warranty?", "answer": "The warranty lasts two years.",
     "contexts": ["Warranty terms: every device has a two year warranty."], "ground_truth": "Two years."},
    {"question": "Do you ship abroad?", "answer": "Yes, we ship to 40 countries.",
     "contexts": ["Shipping FAQ: we ship to 40 countries worldwide."]},
]


install = partial(install_plugin, group=registry.PLUGIN_GROUP, code=PLUGIN)


@pytest.fixture
def site(tmp_path, monkeypatch):
    modules = ("ragmeter_echo", "ragmeter_broken_judge")
    with plugin_site(tmp_path / "site", monkeypatch, registry.JUDGE_PLUGINS, modules) as folder:
        yield folder


@pytest.fixture
def echo(site):
    install(site, "ragmeter_echo", "echo = ragmeter_echo:judges\n", module="ragmeter_echo")
    assert load_judge_plugins(reload=True) == []
    return sys.modules["ragmeter_echo"]


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    return path


def judged_methods(path):
    """The methods of the judged scores in a results JSON (skipped and rule-based ones left out)."""
    report = report_from_json(path.read_text(encoding="utf-8"))
    return {ms.method for r in report.results for ms in r.metric_scores().values()} - {"skipped", "rule"}


def test_an_installed_judge_is_registered_and_wrapped(echo):
    assert judge_kinds()[:2] == ["offline", "openai"] and {"echo", "flaky_echo"} <= set(judge_kinds())
    judge = RunConfig(judge="echo").build_judge()
    assert isinstance(judge, ResilientJudge) and judge.name == "echo"
    assert json.loads(judge.generate("hello"))["score"] == 0.75
    assert judge.usage()["calls"] == 1 and judge.call_info()["retries"] == 0


def test_an_unknown_judge_is_refused_at_config_time_naming_the_registered_ones(echo):
    with pytest.raises(JudgeConfigError) as err:
        RunConfig(judge="anthropic")
    message = str(err.value)
    assert "'anthropic'" in message and "offline, openai, echo, flaky_echo" in message


def test_the_cli_runs_the_plugin_judge_and_a_second_run_is_served_by_the_cache(echo, data, tmp_path, capsys):
    out = tmp_path / "report.json"
    assert main(["evaluate", str(data), "-q", "--judge", "echo", "-o", str(out)]) == 0
    asked = len(echo.CALLS)
    assert asked > 0 and judged_methods(out) == {"llm_blend"}
    assert f"judge: {asked} calls, 0 cache hits" in capsys.readouterr().out
    assert main(["evaluate", str(data), "-q", "--judge", "echo", "-o", str(out)]) == 0
    assert len(echo.CALLS) == asked  # every reply came from the cache
    assert f"judge: 0 calls, {asked} cache hits" in capsys.readouterr().out
    (latest, _) = RunStore().list_runs()
    assert latest.settings["judge"] == "echo" and latest.settings["cache"]


def test_a_flaky_plugin_judge_is_retried_and_its_retries_are_counted(echo, data, tmp_path, capsys):
    out = tmp_path / "report.json"
    assert main(["evaluate", str(data), "-q", "--no-cache", "--judge", "flaky_echo", "-o", str(out)]) == 0
    prompts = len(set(echo.CALLS))
    assert len(echo.CALLS) == 2 * prompts  # each prompt failed once, then was answered
    assert judged_methods(out) == {"llm_blend"}  # no fallback
    assert f"judge: {prompts} calls, 0 cache hits" in capsys.readouterr().out
    usage = RunStore().load_report(RunStore().list_runs()[0].run_id).usage
    assert (usage["calls"], usage["requests"], usage["retries"], usage["failures"]) == (prompts, 2 * prompts, prompts, 0)


def test_an_unknown_judge_on_the_command_line_exits_2_naming_the_registered_ones(echo, data, capsys):
    assert main(["evaluate", str(data), "-q", "--judge", "anthropic"]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "Unknown judge 'anthropic'" in last and "echo" in last
    assert not RunStore().list_runs()  # refused before any run started


def test_a_broken_judge_plugin_is_named_not_a_crash(site, data, capsys):
    install(site, "ragmeter_broken_judge", "gateway = ragmeter_broken_judge:JUDGE\n",
            module="ragmeter_broken_judge", code="raise ImportError('needs gatewaylib 9')\n")
    install(site, "ragmeter_thief_judge", "thief = evaluator.judges.registry:JUDGE_REGISTRY\n")
    problems = load_judge_plugins(reload=True)
    assert any("'gateway'" in p and "needs gatewaylib 9" in p for p in problems)
    assert any("'thief'" in p for p in problems) and judge_plugin_errors() == problems
    assert main(["evaluate", str(data), "-q", "--judge", "gateway"]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "Unknown judge 'gateway'" in last and "needs gatewaylib 9" in last


def test_a_factory_that_fails_is_a_config_error_naming_the_judge(site):
    registry.register_judge(registry.JudgeEntry("sulky", "Sulky", lambda config, key: 1 / 0))
    with pytest.raises(JudgeConfigError, match="The 'sulky' judge could not start: ZeroDivisionError"):
        RunConfig(judge="sulky").build_judge()


def test_a_plugin_judge_never_gets_the_openai_key(site, monkeypatch):
    seen = []
    registry.register_judge(registry.JudgeEntry("keyed", "Keyed", lambda config, key: seen.append(key) or _Nop(),
                                                needs_key=True, key_env="KEYED_TOKEN"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-not-yours")
    monkeypatch.setenv("KEYED_TOKEN", "tok-1")
    RunConfig(judge="keyed").build_judge()
    assert seen == ["tok-1"]


class _Nop:
    def generate(self, prompt):
        return "{}"


# -- the dashboard ---------------------------------------------------------------------------------
def test_the_dashboard_lists_the_plugin_judge_and_runs_it(echo, history):
    from apptest import no_exception, open_app, shown_report
    app = open_app(30)
    judges = app.radio(key="eval_judge")
    assert "Echo judge" in judges.options
    judges.set_value("Echo judge").run()
    app.checkbox(key="eval_cache").uncheck().run()
    app.button(key="btn_run").click().run()
    no_exception(app)
    assert not app.error, [e.value for e in app.error]
    report = shown_report(app)
    methods = {ms.method for r in report.results for ms in r.metric_scores().values()}
    assert "llm_blend" in methods and "llm_fallback" not in methods
    assert report.usage["calls"] > 0  # made by the dashboard's worker process, which imports the plugin too
    (info,) = RunStore(history).list_runs()
    assert info.settings["judge"] == "echo" and info.status == "finished"


def test_a_broken_judge_plugin_is_a_red_box_on_the_dashboard(site, history):
    install(site, "ragmeter_broken_judge", "gateway = ragmeter_broken_judge:JUDGE\n",
            module="ragmeter_broken_judge", code="raise ImportError('needs gatewaylib 9')\n")
    load_judge_plugins(reload=True)
    from apptest import no_exception, open_app
    app = open_app(30)
    no_exception(app)
    assert any("'gateway'" in e.value and "needs gatewaylib 9" in e.value for e in app.error)
    assert app.radio(key="eval_judge").options[:2] == ["Offline (no API key)", "OpenAI-compatible API"]
