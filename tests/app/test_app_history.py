"""History page (AppTest): list, open, rename, delete with confirmation, resume, compare, bad path."""
from pathlib import Path

import pytest

from apptest import shown_report
from streamlit.testing.v1 import AppTest

from evaluator import EvalSample, OfflineJudge, RAGEvaluator
from evaluator.analysis.compare import compare_runs
from evaluator.store.history import RunStore

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 30
SETTINGS = {"judge": "offline", "language": "auto", "max_workers": 1}


def samples(better=False):
    """Six samples; `better` answers copy their context, so faithfulness rises."""
    out = []
    for i in range(6):
        ctx = f"Policy {i}: parcels to zone {i} arrive within {i + 2} working days."
        answer = ctx if better else f"Maybe a week or so, it depends on the weather in zone {i}."
        out.append(EvalSample(f"How fast do parcels reach zone {i}?", answer, [ctx],
                              f"Within {i + 2} working days.", f"z{i}"))
    return out


def save_run(store, data, *, done=None, status="finished"):
    run_id = store.create_run(dataset_name="zones.jsonl", samples=data, settings=SETTINGS)
    evaluator = RAGEvaluator(OfflineJudge())
    for i, sample in enumerate(data[:done]):
        store.record_result(run_id, i, evaluator.evaluate(sample))
    store.finish_run(run_id, status=status, total_time=0.1)
    return run_id


pytestmark = pytest.mark.usefixtures("history")  # the app reads the history `store` opens (tests/conftest.py)


def history_page(switch=True):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/history.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def runs_table(at):
    return at.dataframe[0].value


def test_empty_history_says_so(store):
    at = history_page()
    assert any("No runs yet" in i.value for i in at.info)


def test_lists_a_run_made_on_the_evaluate_page(store):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.button(key="btn_run").click().run()
    at.switch_page("pages/history.py").run()
    table = runs_table(at)
    (info,) = store.list_runs()
    assert list(table["run id"]) == [info.run_id]
    assert table["status"][0] == "finished" and table["scored"][0] == f"{info.n_done}/{info.n_samples}"
    assert table["dataset"][0] == "sample.jsonl"
    assert table["overall"][0] == pytest.approx(info.overall_mean)


def test_open_in_report_shows_the_stored_run(store):
    run_id = save_run(store, samples())
    at = history_page()
    at.button(key="btn_hist_open").click().run()
    assert not at.exception
    assert any(t.value.endswith("Report") for t in at.title)
    stored = store.load_report(run_id)
    cards = {m.label: m.value for m in at.metric}
    assert cards["faithfulness"] == f"{stored.mean_scores()['faithfulness']:.3f}"
    assert at.session_state["run"].run_id == run_id


def test_rename(store):
    run_id = save_run(store, samples())
    at = history_page()
    at.text_input(key=f"hist_name_{run_id}").set_value("baseline prompt")
    at.button(key="btn_hist_rename").click().run()
    assert store.get_run(run_id).name == "baseline prompt"
    assert list(runs_table(at)["name"]) == ["baseline prompt"]


def test_delete_needs_confirmation(store):
    keep, gone = save_run(store, samples()), save_run(store, samples(better=True))
    at = history_page()
    at.selectbox(key="hist_run").set_value(gone).run()
    at.button(key="btn_hist_delete").click().run()
    assert at.warning and "cannot be undone" in at.warning[0].value
    assert {r.run_id for r in store.list_runs()} == {keep, gone}  # nothing deleted yet
    at.button(key="btn_hist_delete_no").click().run()
    assert {r.run_id for r in store.list_runs()} == {keep, gone}
    at.button(key="btn_hist_delete").click().run()
    at.button(key="btn_hist_delete_yes").click().run()
    assert not at.exception
    assert [r.run_id for r in store.list_runs()] == [keep]
    assert list(runs_table(at)["run id"]) == [keep]


def test_compare_two_runs_shows_deltas_and_movers(store):
    run_a = save_run(store, samples())
    run_b = save_run(store, samples(better=True))
    at = history_page()
    at.selectbox(key="hist_cmp_a").set_value(run_a)
    at.selectbox(key="hist_cmp_b").set_value(run_b)
    at.button(key="btn_hist_compare").click().run()
    assert not at.exception
    expected = {d.metric: d for d in compare_runs(store, run_a, run_b).metrics}
    deltas = [d.value for d in at.dataframe if "delta (B−A)" in d.value.columns][0]
    for _, row in deltas.iterrows():
        d = expected[row["metric"]]
        assert (row["mean A"], row["mean B"], row["delta (B−A)"]) == (d.mean_a, d.mean_b, d.delta)
        assert (row["95% CI low"], row["95% CI high"]) == (d.ci_low, d.ci_high)
    faith = deltas.set_index("metric").loc["faithfulness"]
    assert faith["delta (B−A)"] > 0 and faith["decision"].split(" ")[0] == "better"
    movers = [d.value for d in at.dataframe if "question" in d.value.columns and "delta" in d.value.columns][0]
    assert len(movers) > 0 and set(movers["sample"]) <= {f"z{i}" for i in range(6)}


def test_history_shows_each_runs_data_version_and_compare_says_when_they_differ(store):
    from evaluator.io.versions import version_settings

    first = samples()
    changed = samples(better=True)[:5]  # z5 dropped, so B's test set is another version
    run_a = store.create_run(dataset_name="zones.jsonl", samples=first, settings={**SETTINGS, **version_settings(first)})
    run_b = store.create_run(dataset_name="zones.jsonl", samples=changed,
                             settings={**SETTINGS, **version_settings(changed)})
    evaluator = RAGEvaluator(OfflineJudge())
    for run_id, data in ((run_a, first), (run_b, changed)):
        for i, sample in enumerate(data):
            store.record_result(run_id, i, evaluator.evaluate(sample))
        store.finish_run(run_id, status="finished", total_time=0.1)
    at = history_page()
    versions = dict(zip(runs_table(at)["run id"], runs_table(at)["data version"]))
    assert versions[run_a] == store.get_run(run_a).settings["dataset_version"] != versions[run_b]
    at.selectbox(key="hist_cmp_a").set_value(run_a)
    at.selectbox(key="hist_cmp_b").set_value(run_b)
    at.button(key="btn_hist_compare").click().run()
    assert not at.exception
    (note,) = [w.value for w in at.warning if "different versions" in w.value]
    assert "(6 rows)" in note and "(5 rows)" in note and "the 5 sample ids both share" in note
    deltas = [d.value for d in at.dataframe if "delta (B−A)" in d.value.columns][0]
    assert set(deltas["pairs"]) <= {5} and "p" in deltas.columns


def test_compare_runs_with_different_metrics_names_each_sides_and_compares_the_shared(store):
    data = samples()
    run_a = save_run(store, data)
    run_b = store.create_run(dataset_name="zones.jsonl", samples=data, settings=SETTINGS)
    narrow = RAGEvaluator(OfflineJudge(), metrics=["faithfulness", "answer_relevancy"])
    for i, sample in enumerate(data):
        store.record_result(run_b, i, narrow.evaluate(sample))
    store.finish_run(run_b, status="finished", total_time=0.1)
    at = history_page()
    at.selectbox(key="hist_cmp_a").set_value(run_a)
    at.selectbox(key="hist_cmp_b").set_value(run_b)
    at.button(key="btn_hist_compare").click().run()
    assert not at.exception
    shown = " ".join(w.value for w in at.warning)
    assert "A has 5 metrics, B has 2" in shown and "Only in A: context_precision" in shown
    deltas = [d.value for d in at.dataframe if "delta (B−A)" in d.value.columns][0]
    assert list(deltas["metric"]) == ["faithfulness", "answer_relevancy", "overall"]
    assert not any("No sample's score changed between" in c.value for c in at.caption)


def test_resume_a_stopped_run_finishes_it(store):
    data = samples()
    run_id = save_run(store, data, done=2, status="stopped")
    at = history_page()
    assert at.button(key="btn_hist_resume").label == "Resume run"
    at.button(key="btn_hist_resume").click().run()
    assert not at.exception, [e.value for e in at.exception]
    info = store.get_run(run_id)
    assert (info.status, info.n_done, info.n_samples) == ("finished", 6, 6)
    report = shown_report(at)
    assert [r.sample_id for r in report.results] == [s.sample_id for s in data]
    assert at.session_state["run"].run_id == run_id


def test_finished_runs_offer_no_resume(store):
    save_run(store, samples())
    at = history_page()
    assert not [b for b in at.button if b.key == "btn_hist_resume"]


def test_unusable_history_path_is_an_inline_error(store, tmp_path):
    at = history_page()
    folder = tmp_path / "a-folder"
    folder.mkdir()
    at.sidebar.text_input(key="history_path").set_value(str(folder)).run()
    assert not at.exception
    assert at.error and "Not used: a history file's name ends in .sqlite3" in at.error[0].value
    assert list(folder.iterdir()) == []  # a typed path creates nothing


def test_a_typed_path_outside_home_creates_no_file(store, tmp_path):
    target = tmp_path.parent / f"{tmp_path.name}-outside" / "evil.sqlite3"
    at = history_page()
    at.sidebar.text_input(key="history_path").set_value(str(target)).run()
    assert not at.exception
    assert "under your home folder" in at.error[0].value and not target.parent.exists()


def test_resume_of_an_openai_run_asks_for_the_key_again(store):
    from openai_server import ChatServer

    key = "sk-canary-resume-dashboard-0b7"
    with ChatServer() as srv:
        settings = {"judge": "openai", "model": "test-model", "base_url": srv.base_url, "language": "auto",
                    "max_workers": 2, "cache": None}
        run_id = store.create_run(dataset_name="zones.jsonl", samples=samples(), settings=settings)
        store.finish_run(run_id, status="stopped")
        at = history_page()
        at.text_input(key="hist_resume_key").set_value(key)
        at.button(key="btn_hist_resume").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert srv.chat_requests and all(r.headers["authorization"] == f"Bearer {key}" for r in srv.chat_requests)
    info = store.get_run(run_id)
    assert (info.status, info.n_done) == ("finished", 6)
    assert key not in repr(info.settings)


def test_an_old_conversation_run_resumes_and_rescores_from_the_history_page(tmp_path, monkeypatch):
    """A run written by 2f405f4 (tests/fixtures/history_2f405f4.sqlite3) goes on through the one Run."""
    import shutil

    path = tmp_path / "old.sqlite3"
    shutil.copyfile(ROOT / "tests" / "fixtures" / "history_2f405f4.sqlite3", path)
    monkeypatch.setenv("RAGMETER_HISTORY", str(path))
    chats = next(r for r in RunStore(path).list_runs() if r.dataset_name == "conversations.jsonl")
    at = history_page()
    at.selectbox(key="hist_run").set_value(chats.run_id).run()
    at.button(key="btn_hist_resume").click().run()
    assert not at.exception, [e.value for e in at.exception]
    info = RunStore(path).get_run(chats.run_id)
    assert (info.status, info.n_done, info.n_samples) == ("finished", 4, 4)
    report = shown_report(at)
    assert report.multi_turn and [len(r.turns) for r in report.results] == [2, 2, 1, 2]  # 7 assistant turns
    at = history_page()
    at.selectbox(key="hist_run").set_value(chats.run_id).run()
    at.button(key="btn_hist_rescore").click().run()
    assert not at.exception, [e.value for e in at.exception]
    rescored = at.session_state["run"]
    assert rescored.run_id != chats.run_id and rescored.settings["rescored_from"] == chats.run_id
    assert shown_report(at).multi_turn


def test_a_rescore_is_named_as_typed_or_by_default_like_the_command_lines(store):
    """The re-score form's Name, as `ragmeter evaluate --rescore RUN_ID --name NAME`: the new run is listed under
    it; left empty, the new run gets the default 'dataset · scorer · date' name."""
    run_id = save_run(store, samples())
    at = history_page()
    at.text_input(key="hist_rescore_name").set_value("offline again").run()
    at.button(key="btn_hist_rescore").click().run()
    assert not at.exception, [e.value for e in at.exception]
    named = at.session_state["run"].run_id
    assert store.get_run(named).name == "offline again" and store.get_run(named).settings["rescored_from"] == run_id
    at = history_page()
    at.selectbox(key="hist_run").set_value(run_id).run()
    at.button(key="btn_hist_rescore").click().run()
    unnamed = store.get_run(at.session_state["run"].run_id)
    assert unnamed.run_id not in (run_id, named) and unnamed.label.startswith("zones.jsonl · ")
