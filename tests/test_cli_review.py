"""`ragmeter review export/import/stats/align` and `evaluate --align-with`, through main() on real files."""
import json

import pytest

from evaluator.cli.command import main
from evaluator.store.history import RunStore
from evaluator.store.reviews import Review, ReviewStore

ROWS = [
    {"question": "How long is the warranty?", "answer": "The warranty lasts two years.",
     "contexts": ["Warranty terms: every device has a two year warranty."], "ground_truth": "Two years.",
     "sample_id": "w1"},
    {"question": "Do you ship abroad?", "answer": "Yes, we ship to 40 countries.",
     "contexts": ["Shipping FAQ: we ship to 40 countries worldwide."], "sample_id": "s1"},
    {"question": "ما هي مدة الضمان؟", "answer": "مدة الضمان سنتان.",
     "contexts": ["شروط الضمان: لكل جهاز ضمان لمدة سنتين."], "ground_truth": "سنتان", "sample_id": "a1"},
]


@pytest.fixture
def unreviewed(tmp_path):
    """ROWS evaluated offline through the CLI: (its run id, the review store on the history)."""
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in ROWS) + "\n", encoding="utf-8")
    assert main(["evaluate", str(data), "-q", "--offline"]) == 0
    store = ReviewStore(RunStore())
    (info,) = store.runs.list_runs()
    return info.run_id, store


@pytest.fixture
def run(unreviewed):
    run_id, store = unreviewed
    results = dict(store.runs.indexed_results(run_id))
    faith = [results[i].scores["faithfulness"].score for i in range(3)]
    store.record(Review(run_id, 0, "faithfulness", "agree", "ana", judge_score=faith[0]))
    store.record(Review(run_id, 1, "faithfulness", "disagree", "ana", corrected=0.25, note="40 is wrong",
                        judge_score=faith[1]))
    store.record(Review(run_id, 2, "faithfulness", "disagree", "ana", corrected=2, scale="1-5",
                        judge_score=faith[2]))
    return run_id, store, faith


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_exported_labels_are_read_back_by_labels(run, tmp_path, capsys, suffix):
    run_id, _, faith = run
    out = tmp_path / f"labels{suffix}"
    assert main(["review", "export", run_id, "-o", str(out)]) == 0
    assert "Wrote 3 reviewed samples" in capsys.readouterr().out
    assert main(["evaluate", str(out), "-q", "--offline", "--labels", "--no-history"]) == 0
    printed = capsys.readouterr().out
    table = printed[printed.index("metric "):]
    assert "faithfulness" in table and "graded" in table and "No human_<metric>" not in printed
    from evaluator.io.datasets import load_dataset
    labels = [s.metadata["human_labels"]["faithfulness"] for s in load_dataset(str(out))]
    assert labels == [pytest.approx(faith[0]), 0.25, 0.25]  # 2 on 1-5 is 0.25


def test_imported_labels_become_reviews_of_another_reviewer(run, tmp_path, capsys):
    run_id, store, faith = run
    out = tmp_path / "labels.csv"
    assert main(["review", "export", run_id, "-o", str(out)]) == 0
    assert main(["review", "import", run_id, str(out), "--reviewer", "bo"]) == 0
    assert "Stored 3 reviews by bo" in capsys.readouterr().out
    bo = {r.index: r for r in store.reviews(run_id, reviewer="bo")}
    assert (bo[0].verdict, bo[1].verdict, bo[1].human_score) == ("agree", "disagree", 0.25)
    assert main(["review", "stats", run_id]) == 0
    stats = capsys.readouterr().out
    assert "faithfulness" in stats and "reviewers' alpha 1.00" in stats


def test_importing_a_row_of_another_run_names_it(run, tmp_path, capsys):
    run_id, _, _ = run
    bad = tmp_path / "other.jsonl"
    bad.write_text(json.dumps({"sample_id": "zz", "question": "q", "answer": "a", "human_faithfulness": 1}) + "\n")
    assert main(["review", "import", run_id, str(bad)]) == 2
    err = capsys.readouterr().err
    assert "data row 1 has sample_id 'zz', which is not a sample of run" in err


def test_a_run_aligned_with_a_saved_set_sends_the_examples_and_records_the_set(run, capsys):
    from openai_server import ChatServer

    run_id, _, _ = run
    assert main(["review", "align", run_id, "--name", "strict"]) == 0
    assert "Saved example set strict@v1: faithfulness 2" in capsys.readouterr().out
    with ChatServer() as srv:
        assert main(["evaluate", "--rescore", run_id, "-q", "--model", "judge", "--base-url", srv.base_url,
                     "--metrics", "faithfulness,answer_relevancy", "--align-with", "strict", "--no-cache"]) == 0
        prompts = [r.body["messages"][-1]["content"] for r in srv.chat_requests]
    faith = [p for p in prompts if "{\"claims\": [" in p]  # the English and the Arabic prompt
    assert len(faith) == 3 and all("[EXAMPLE 2]" in p and "REVIEWER NOTE: 40 is wrong" in p for p in faith)
    assert not any("[EXAMPLE" in p for p in prompts if p not in faith)  # only the metric with examples
    newest = RunStore().list_runs()[0]
    assert newest.settings["alignment"]["name"] == "strict" and newest.settings["alignment"]["version"] == 1


def test_an_unknown_set_is_named_with_the_saved_ones(run, capsys):
    run_id, _, _ = run
    assert main(["evaluate", "--rescore", run_id, "-q", "--align-with", "nope"]) == 2
    assert "no example set 'nope'" in capsys.readouterr().err


def test_exporting_an_unreviewed_run_writes_every_row_with_an_empty_column_per_scored_metric(unreviewed, tmp_path,
                                                                                              capsys):
    import csv
    run_id, _ = unreviewed
    out = tmp_path / "to_label.csv"
    assert main(["review", "export", run_id, "-o", str(out)]) == 0
    assert "Wrote 3 rows to label" in capsys.readouterr().out
    rows = list(csv.DictReader(out.open(encoding="utf-8-sig")))
    assert [r["sample_id"] for r in rows] == ["w1", "s1", "a1"]
    human = [c for c in rows[0] if c.startswith("human_")]
    assert human == ["human_faithfulness", "human_answer_relevancy", "human_context_precision",
                     "human_context_recall", "human_answer_correctness"]
    assert all(r[c] == "" for r in rows for c in human)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_a_spreadsheet_of_sample_id_and_human_columns_imports(unreviewed, tmp_path, capsys, suffix):
    run_id, store = unreviewed
    labels = [{"sample_id": "w1", "human_faithfulness": 1.0}, {"sample_id": "s1", "human_faithfulness": None},
              {"sample_id": "a1", "human_faithfulness": 0.0}]
    path = tmp_path / f"labels{suffix}"
    if suffix == ".csv":
        path.write_text("sample_id,human_faithfulness\nw1,1\ns1,\na1,0\n", encoding="utf-8")
    elif suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in labels), encoding="utf-8")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq
        pq.write_table(pa.Table.from_pylist(labels), path)
    assert main(["review", "import", run_id, str(path)]) == 0, capsys.readouterr().err
    assert "Stored 2 reviews" in capsys.readouterr().out
    stored = {r.sample_id: r.human_score for r in store.reviews(run_id)}
    assert stored == {"w1": 1.0, "a1": 0.0}


def test_a_label_file_without_human_columns_says_what_it_needs(unreviewed, tmp_path, capsys):
    run_id, _ = unreviewed
    path = tmp_path / "labels.csv"
    path.write_text("sample_id,score\nw1,1\n", encoding="utf-8")
    assert main(["review", "import", run_id, str(path)]) == 2
    assert "no human_<metric> column (e.g. human_faithfulness)" in capsys.readouterr().err
