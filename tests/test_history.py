"""history: the run store, on real SQLite files and a real PostgreSQL server (tests/pgserver.py)."""
import json
import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest

from evaluator.errors import HistoryError
from evaluator import OfflineJudge, RAGEvaluator
from evaluator.store.history import MIGRATIONS, RunStore, default_history_path
from evaluator.model import METHOD_BLEND, METRICS, EvalResult, EvalSample, MetricScore

CANARY = "sk-canary-5f0e1d2c3b4a"


def samples(n=5, prefix="s"):
    return [EvalSample(f"Question {i}?", f"Answer {i}.", [f"Context {i}."], f"Answer {i}", sample_id=f"{prefix}{i}",
                       category="a" if i % 2 else "b") for i in range(n)]


def scored(sample: EvalSample, score: float, **per_metric) -> EvalResult:
    scores = {m: MetricScore(m, per_metric.get(m, score), "why", method=METHOD_BLEND) for m in METRICS}
    return EvalResult(sample.sample_id, **scores, elapsed_sec=0.5, sample=sample)


STORE_BACKENDS = ("sqlite", "postgresql")  # each test using `store` runs on both (tests/conftest.py)


def raw_rows(store, sql, params=()):
    """Rows read straight from the database with its own driver, not through RunStore."""
    if store.dialect == "sqlite":
        with sqlite3.connect(store.path) as db:
            return db.execute(sql, params).fetchall()
    import psycopg

    with psycopg.connect(store.path) as db:
        return db.execute(sql.replace("?", "%s"), params).fetchall()


def test_create_record_finish_list_and_load(store):
    data = samples(3)
    run_id = store.create_run(dataset_name="faq.csv", samples=data, settings={"model": "m"}, name="first")
    assert store.get_run(run_id).status == "running"
    results = RAGEvaluator(OfflineJudge()).evaluate_dataset(data).results
    for i, r in enumerate(results):
        store.record_result(run_id, i, r)
    store.finish_run(run_id, total_time=4.5, usage={"calls": 12, "prompt_tokens": 300})
    [info] = store.list_runs()
    assert (info.run_id, info.name, info.dataset_name, info.status) == (run_id, "first", "faq.csv", "finished")
    assert (info.n_samples, info.n_done, info.total_time, info.settings) == (3, 3, 4.5, {"model": "m"})
    assert info.overall_mean == pytest.approx(sum(r.overall() for r in results) / 3, abs=1e-4)
    report = store.load_report(run_id)
    assert report.results == results
    assert (report.total_time, report.usage) == (4.5, {"calls": 12, "prompt_tokens": 300})


def test_list_runs_newest_first_and_rename_delete(store):
    first = store.create_run(dataset_name="a", samples=samples(1), settings={})
    second = store.create_run(dataset_name="b", samples=samples(2), settings={})
    assert [r.run_id for r in store.list_runs()] == [second, first]
    store.rename_run(first, "  baseline ")
    assert store.get_run(first).name == "baseline" and store.get_run(first).label == "baseline"
    store.record_result(second, 0, scored(samples(1)[0], 0.5))
    store.delete_run(second)
    assert [r.run_id for r in store.list_runs()] == [first]
    # the run's samples and results went with it
    assert raw_rows(store, "SELECT COUNT(*) FROM results WHERE run_id = ?", (second,)) == [(0,)]
    assert raw_rows(store, "SELECT COUNT(*) FROM samples WHERE run_id = ?", (second,)) == [(0,)]


def test_record_result_is_idempotent_and_resume_sees_pending(store):
    data = samples(5)
    run_id = store.create_run(dataset_name="d", samples=data, settings={})
    for i in (0, 1, 3):
        store.record_result(run_id, i, scored(data[i], 0.5))
    store.record_result(run_id, 1, scored(data[1], 0.9))  # a resumed run redoing an in-flight sample
    assert store.completed_indices(run_id) == {0, 1, 3}
    assert store.pending_samples(run_id) == [(2, data[2]), (4, data[4])]
    report = store.load_report(run_id)
    assert [r.sample_id for r in report.results] == ["s0", "s1", "s3"]
    assert report.results[1].faithfulness.score == 0.9
    assert store.get_run(run_id).n_done == 3
    assert store.samples(run_id) == data


def test_finish_run_status_values(store):
    run_id = store.create_run(dataset_name="d", samples=samples(1), settings={})
    store.finish_run(run_id, status="stopped")
    assert store.get_run(run_id).status == "stopped"
    with pytest.raises(ValueError, match="status must be one of"):
        store.finish_run(run_id, status="done")


@pytest.mark.parametrize("call", [
    lambda s: s.get_run("nope"), lambda s: s.load_report("nope"), lambda s: s.rename_run("nope", "x"),
    lambda s: s.delete_run("nope"), lambda s: s.finish_run("nope"), lambda s: s.pending_samples("nope"),
    lambda s: s.record_result("nope", 0, scored(samples(1)[0], 0.5)), lambda s: s.update_settings("nope", {}),
])
def test_unknown_run_id_is_an_actionable_error(store, call):
    with pytest.raises(HistoryError, match="No run with id 'nope'.*History page"):
        call(store)


def test_update_settings_merges_and_keeps_no_secret(store):
    run_id = store.create_run(dataset_name="d", samples=samples(2), settings={"model": "m", "language": "en"})
    merged = store.update_settings(run_id, {"batch_ids": ["batch_1"], "api_key": CANARY, "language": "ar"})
    assert merged == {"model": "m", "language": "ar", "batch_ids": ["batch_1"]}
    assert RunStore(store.path).get_run(run_id).settings == merged


def test_unwritable_path_names_the_path_and_the_env_var(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    with pytest.raises(HistoryError, match="not-a-dir.*RAGMETER_HISTORY"):
        RunStore(blocker / "history.sqlite3")


def test_env_var_chooses_the_default_path(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "custom.sqlite3"))
    assert default_history_path() == tmp_path / "custom.sqlite3"
    assert RunStore().path == tmp_path / "custom.sqlite3" and (tmp_path / "custom.sqlite3").exists()


def test_wal_mode_and_migrations_recorded_once(tmp_path):
    store = RunStore(tmp_path / "history.sqlite3")
    RunStore(store.path)  # reopening applies nothing twice
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA page_size").fetchone() == (8192,)  # a new file: few half-empty pages
        names = [row[0] for row in db.execute("SELECT name FROM _migrations ORDER BY name")]
    assert names == sorted(step.__name__ for step in MIGRATIONS)


def test_old_database_is_migrated(tmp_path):
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:  # a database made before the second migration existed
        db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        MIGRATIONS[0](db)
        db.execute("INSERT INTO _migrations VALUES (?, 'then')", (MIGRATIONS[0].__name__,))
    store = RunStore(path)
    run_id = store.create_run(dataset_name="d", samples=[], settings={})
    store.finish_run(run_id)
    assert store.get_run(run_id).finished_at is not None


def test_canary_key_never_reaches_the_database_files(tmp_path):
    path = tmp_path / "history.sqlite3"
    store = RunStore(path)
    reader = sqlite3.connect(path)  # an open reader keeps the -wal file on disk
    reader.execute("SELECT COUNT(*) FROM runs").fetchone()
    data = samples(3)
    settings = {"api_key": CANARY, "nested": {"authorization": CANARY}, "base_url": f"http://k:{CANARY}@h/v1"}
    run_id = store.create_run(dataset_name="d", samples=data, settings=settings)
    for i, s in enumerate(data):
        store.record_result(run_id, i, scored(s, 0.5))
    store.finish_run(run_id, usage={"calls": 3, "api_key": CANARY})
    files = sorted(p.name for p in tmp_path.iterdir())
    assert "history.sqlite3-wal" in files
    for p in tmp_path.iterdir():
        assert CANARY.encode() not in p.read_bytes(), p.name
    reader.close()
    assert store.get_run(run_id).settings == {"nested": {}, "base_url": "http://h/v1"}


def test_concurrent_writers_lose_nothing(store):
    data = samples(200)
    run_id = store.create_run(dataset_name="d", samples=data, settings={})
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: store.record_result(run_id, i, scored(data[i], 0.5)), range(200)))
    assert store.completed_indices(run_id) == set(range(200)) and store.pending_samples(run_id) == []


def test_result_rows_do_not_repeat_the_sample_text(store):
    data = [EvalSample("Question?", "Answer.", [f"Context number {i} " + "x" * 300 for i in range(4)], "Ref",
                       sample_id="c0")]
    run_id = store.create_run(dataset_name="d", samples=data, settings={})
    result = RAGEvaluator(OfflineJudge()).evaluate(data[0])
    store.record_result(run_id, 0, result)
    [(record,)] = raw_rows(store, "SELECT record FROM results WHERE run_id = ?", (run_id,))
    [(sample_record,)] = raw_rows(store, "SELECT record FROM samples WHERE run_id = ?", (run_id,))
    assert "Context number" not in record and "x" * 300 not in record
    assert sample_record.count("x" * 300) == 4  # the one copy
    assert store.load_report(run_id).results == [result]


@pytest.mark.parametrize("other", [None, EvalSample("Another question?", "Another answer.", ["Other."], sample_id="z")])
def test_result_whose_sample_is_not_the_runs_own_round_trips(store, other):
    data = samples(2)
    run_id = store.create_run(dataset_name="d", samples=data, settings={})
    result = scored(data[1], 0.7)
    result.sample = other
    store.record_result(run_id, 1, result)
    assert store.indexed_results(run_id) == [(1, result)]


def test_rows_written_before_the_compact_migration_still_load(tmp_path):
    from evaluator.io.records import result_to_record, sample_to_record

    path = tmp_path / "old.sqlite3"
    data = samples(3)
    results = RAGEvaluator(OfflineJudge()).evaluate_dataset(data).results
    with sqlite3.connect(path) as db:  # a database as the m001/m002 code wrote it: full records
        db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        for step in MIGRATIONS[:2]:
            step(db)
            db.execute("INSERT INTO _migrations VALUES (?, 'then')", (step.__name__,))
        db.execute("INSERT INTO runs (run_id, dataset_name, created_at, status, n_samples, settings) "
                   "VALUES ('old', 'd', '2026-01-01T00:00:00', 'stopped', 3, '{}')")
        for i, s in enumerate(data):
            db.execute("INSERT INTO samples VALUES ('old', ?, ?)", (i, json.dumps(sample_to_record(s, i))))
        for i in (0, 1):
            db.execute("INSERT INTO results VALUES ('old', ?, ?, ?, ?)",
                       (i, results[i].sample_id, results[i].overall(), json.dumps(result_to_record(results[i], i))))
    store = RunStore(path)
    store.record_result("old", 2, results[2])  # a resumed old run: new rows are compact beside the old ones
    assert store.load_report("old").results == results
    assert store.get_run("old").n_done == 3 and store.pending_samples("old") == []


def test_each_run_records_its_owner_and_project_and_listing_filters_by_them(store, monkeypatch):
    monkeypatch.setenv("RAGMETER_USER", "ci-bot")
    a = store.create_run(dataset_name="faq.csv", samples=samples(1), settings={}, owner="alice@example.com",
                         project="support bot")
    b = store.create_run(dataset_name="faq.csv", samples=samples(1), settings={})  # owner from the env, project = dataset
    c = store.create_run(dataset_name="docs.jsonl", samples=samples(1), settings={}, owner="alice@example.com")
    assert (store.get_run(a).owner, store.get_run(a).project) == ("alice@example.com", "support bot")
    assert (store.get_run(b).owner, store.get_run(b).project) == ("ci-bot", "faq.csv")
    assert [r.run_id for r in store.list_runs(owner="alice@example.com")] == [c, a]
    assert [r.run_id for r in store.list_runs(project="faq.csv")] == [b]
    assert [r.run_id for r in store.list_runs(owner="alice@example.com", project="support bot")] == [a]
    assert store.list_runs(owner="nobody") == []
    assert store.owners_and_projects() == (["alice@example.com", "ci-bot"], ["docs.jsonl", "faq.csv", "support bot"])


def test_a_postgres_url_is_a_history_location_and_its_password_is_never_shown(postgres_url, monkeypatch):
    monkeypatch.setenv("RAGMETER_HISTORY", postgres_url)
    store = RunStore()
    assert store.dialect == "postgresql" and store.path == postgres_url
    host = postgres_url.split("@", 1)[1]
    with pytest.raises(HistoryError) as failed:
        RunStore(f"postgresql://postgres:{CANARY}@{host}_missing")
    assert CANARY not in str(failed.value) and "Cannot connect to the run history" in str(failed.value)


def test_a_labelled_history_never_names_its_location(tmp_path):
    """Team mode names its history by a label: the database URL (user, host, port) is the operator's."""
    from evaluator.errors import HistoryError

    store = RunStore(tmp_path / "secret-folder" / "h.sqlite3", label="this team's shared run history")
    assert store.shown == "this team's shared run history" and "secret-folder" in store.location
    with pytest.raises(HistoryError) as caught:
        store.get_run("nope")
    assert "this team's shared run history" in str(caught.value) and "secret-folder" not in str(caught.value)
