"""`ragmeter generate` end to end: documents in, a test set out that `ragmeter evaluate --target` runs."""
import json

import pytest

from docfiles import big_corpus, write_corpus
from evaluator.cli.command import main
from evaluator.generate.items import read_testset
from openai_server import ChatServer, error
from writer_model import WriterModel

TARGET = '''
import re
DOCS = {DOCS!r}

def answer(question):
    words = set(re.findall(r"\\w+", question.lower()))
    best = max(DOCS, key=lambda t: len(words & set(re.findall(r"\\w+", (t + " " + DOCS[t]).lower()))))
    return DOCS[best].split(".")[0], [best + ": " + DOCS[best]]
'''


def generate(*args):
    return main(["generate", *map(str, args)])


@pytest.fixture
def docs(tmp_path):
    return write_corpus(tmp_path / "docs")


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_generate_writes_a_test_set_evaluate_runs_with_a_target(tmp_path, docs, capsys, suffix):
    out = tmp_path / f"testset{suffix}"
    with ChatServer(responder=WriterModel()) as srv:
        code = generate("--docs", docs, "--model", "writer", "--base-url", srv.base_url, "--n", 6, "-o", out)
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "ragmeter: ok: 6 items kept" in printed.err.strip().splitlines()[-1]
    assert "coverage: 4/4 documents" in printed.out and "judge: " in printed.out and "per kept item" in printed.out
    items = read_testset(out)
    assert len(items) == 6 and all(i.chunk_ids and i.kind for i in items)

    from evaluator.generate.documents import load_documents
    target = tmp_path / "pipeline.py"
    target.write_text(TARGET.replace("{DOCS!r}", repr({d.title: d.body for d in load_documents(docs)})))
    report = tmp_path / "report.json"
    code = main(["evaluate", str(out), "--target", f"{target}:answer", "--offline", "--no-history", "-o", str(report), "-q"])
    assert code == 0, capsys.readouterr().err
    records = json.loads(report.read_text())["records"]
    assert len(records) == 6
    answerable = [r for r in records if r["expected_docs"]]
    recall = [r["metrics"]["expected_doc_recall"]["score"] for r in answerable]
    assert answerable and all(s is not None for s in recall) and max(recall) == 1.0  # the generated titles match
    assert all(r["metadata"]["kind"] and r["metadata"]["chunk_ids"] for r in records)


def test_without_a_model_generation_is_refused_with_exit_2(docs, tmp_path, capsys):
    assert generate("--docs", docs, "-o", tmp_path / "t.jsonl") == 2
    err = capsys.readouterr().err
    assert "generate needs a model" in err and "--offline" in err and not (tmp_path / "t.jsonl").exists()


def test_offline_mode_says_it_is_for_retrieval_checks_only(docs, tmp_path, capsys):
    assert generate("--docs", docs, "--offline", "--n", 4, "-o", tmp_path / "t.jsonl") == 0
    out = capsys.readouterr()
    assert "offline extractive mode" in out.out and "retrieval checks only" in out.err


def test_a_shortfall_exits_1_and_keeps_what_passed(docs, tmp_path, capsys):
    out = tmp_path / "t.jsonl"
    with ChatServer(responder=WriterModel(reject_every=2)) as srv:
        code = generate("--docs", docs, "--model", "writer", "--base-url", srv.base_url, "--n", 40,
                        "--max-attempts", 10, "--kinds", "single", "-o", out)
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 1 and err.startswith("ragmeter: SHORT: kept ") and "unsupported_reference" in err
    assert 0 < len(read_testset(out)) < 40


def test_a_judge_that_rejects_the_key_exits_3(docs, tmp_path, capsys):
    with ChatServer(default=error(401, "invalid api key")) as srv:
        code = generate("--docs", docs, "--model", "writer", "--base-url", srv.base_url, "--n", 5,
                        "--no-cache", "-o", tmp_path / "t.jsonl")
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 3 and last.startswith("ragmeter: judge failed") and "401" in last


def test_resume_continues_the_file_and_fill_gaps_adds_only_for_untouched_sections(tmp_path, capsys):
    docs = big_corpus(tmp_path / "docs", documents=5, sections=2)
    out = tmp_path / "t.jsonl"
    with ChatServer(responder=WriterModel()) as srv:
        base = ["--docs", docs, "--model", "writer", "--base-url", srv.base_url, "--kinds", "single", "-o", out]
        assert generate(*base, "--n", 3) == 0
        assert generate(*base, "--n", 5, "--resume") == 0
        items = read_testset(out)
        assert len(items) == 5 and len({i.id for i in items}) == 5
        filled = tmp_path / "filled.jsonl"
        assert generate("--docs", docs, "--model", "writer", "--base-url", srv.base_url, "--kinds", "single",
                        "--fill-gaps", out, "-o", filled) == 0
    printed = capsys.readouterr().out
    assert "--fill-gaps: 5 untouched sections" in printed
    assert len(read_testset(filled)) == 10 and "coverage: 5/5 documents and 10/10 sections" in printed


def test_coverage_of_a_hand_written_test_set(tmp_path, docs, capsys):
    hand = tmp_path / "hand.csv"
    hand.write_text("question,ground_truth,expected_docs\n"
                    "How much is a day pass?,9 euros,Day passes\n"
                    "When are batteries swapped?,Every night between 1 am and 5 am,Electric bikes\n"
                    "Who is the CEO?,,\n")
    assert generate("--docs", docs, "--coverage-only", hand) == 0
    out = capsys.readouterr().out
    assert "coverage: 2/4 documents and 2/6 sections" in out and "1 item(s) touch no document" in out
    assert "Electric bikes · Electric bikes > Pricing" in out  # the section no question touches is named
    assert "Lost property" in out.split("untouched sections")[1]


def test_with_history_the_generation_is_a_job_in_the_history_and_the_file_is_the_same(tmp_path, docs, capsys):
    from evaluator.runs.generation import stored_items
    from evaluator.store.generations import Generations
    from evaluator.store.history import RunStore
    from evaluator.store.jobs import JobQueue

    history, out = tmp_path / "h.sqlite3", tmp_path / "testset.jsonl"
    with ChatServer(responder=WriterModel()) as srv:
        code = generate("--docs", docs, "--model", "writer", "--base-url", srv.base_url, "--n", 4, "-o", out,
                        "--history", history)
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "ragmeter: ok: 4 items kept" in printed.err.strip().splitlines()[-1]
    store = RunStore(history)
    [info] = Generations(store).list()
    job = JobQueue(store).get(info.gen_id)
    assert (info.status, info.n_items, info.name, job.kind, job.state) == ("finished", 4, "docs", "generate", "ended")
    assert f"generation {info.gen_id}" in printed.err and store.list_runs() == []
    assert [i.question for i in stored_items(store, info.gen_id)] == [i.question for i in read_testset(out)]


def test_with_history_a_stop_from_elsewhere_ends_it_as_ctrl_c_does(tmp_path, docs, capsys):
    import threading
    import time

    from evaluator.runs.jobs import stop_run
    from evaluator.store.generations import Generations
    from evaluator.store.history import RunStore

    history, out = tmp_path / "h.sqlite3", tmp_path / "testset.jsonl"
    store = RunStore(history)

    def stop_when_two_are_kept():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = Generations(store).list()
            if found and found[0].n_items >= 2:
                stop_run(store, found[0].gen_id)  # what `ragmeter runs stop GEN_ID` does
                return
            time.sleep(0.05)

    stopper = threading.Thread(target=stop_when_two_are_kept, daemon=True)
    stopper.start()
    with ChatServer(responder=WriterModel(), latency=0.1) as srv:
        code = generate("--docs", docs, "--model", "writer", "--base-url", srv.base_url, "--n", 30, "-o", out,
                        "--history", history, "--max-workers", 1, "--kinds", "single=1")
    stopper.join(5)
    printed = capsys.readouterr()
    assert code == 130, printed.err
    assert "stopped from elsewhere" in printed.err
    [info] = Generations(store).list()
    assert info.status == "stopped" and 2 <= len(read_testset(out)) < 30
