"""`ragmeter review queue` and the corrected mean in `review stats` (--json), through main() on real files."""
import csv
import json

import pytest

from evaluator.analysis.inference import corrected_mean, weighted_corrected_mean
from evaluator.cli.command import main
from evaluator.review.queue import informative_sample
from evaluator.store.history import RunStore

WORDS = ["red", "blue", "green", "steel", "folding", "cargo"]


def row(i):
    fact = f"Store {i} opens at {i % 12 + 1} o'clock and sells {WORDS[i % 6]} bicycles."
    answer = fact if i % 3 else f"Store {i} sells {WORDS[(i + 1) % 6]} scooters on the moon."
    return {"question": f"When does store {i} open?", "answer": answer, "contexts": [fact], "sample_id": f"q{i}"}


@pytest.fixture
def run(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row(i)) + "\n" for i in range(80)), encoding="utf-8")
    assert main(["evaluate", str(data), "-q", "--offline", "--metrics", "faithfulness"]) == 0
    (info,) = RunStore().list_runs()
    return info.run_id


def queued(capsys, run_id, *options):
    assert main(["review", "queue", run_id, "--metric", "faithfulness", *options]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines() if not line.startswith("#")]
    return [int(parts[1].lstrip("#")) for parts in lines]


def human(i):  # the people's verdict: the invented answers are unfaithful, the rest faithful
    return 0.0 if i % 3 == 0 else 1.0


def import_labels(tmp_path, run_id, indices, *queue):
    path = tmp_path / "labels.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["sample_id", "question", "human_faithfulness"])
        for i in indices:
            w.writerow([f"q{i}", f"When does store {i} open?", human(i)])
    assert main(["review", "import", run_id, str(path), "--reviewer", "ana", *queue]) == 0


def stats(capsys, run_id):
    assert main(["review", "stats", run_id, "--json"]) == 0
    out = capsys.readouterr().out
    return json.loads(out[out.index("{"):])["faithfulness"]["correction"]  # after the import's line


def judged(run_id):
    return [r.scores["faithfulness"].score for _, r in RunStore().indexed_results(run_id)]


def test_random_queue_reviews_give_the_ppi_corrected_mean(run, tmp_path, capsys):
    drawn = queued(capsys, run, "--order", "random", "-n", "25", "--seed", "3")
    assert len(drawn) == 25 and len(set(drawn)) == 25
    import_labels(tmp_path, run, drawn, "--queue", "random")
    got = stats(capsys, run)
    expected = corrected_mean(judged(run), {i: human(i) for i in drawn})
    assert got["queue"] == "random" and got["n_labels"] == 25
    assert got["mean"] == pytest.approx(expected.mean) and got["interval"] == pytest.approx([expected.low, expected.high])
    assert main(["review", "stats", run]) == 0
    line = capsys.readouterr().out
    assert (f"judged {expected.judged_mean:.2f} → corrected {expected.mean:.2f} [{expected.low:.2f}, "
            f"{expected.high:.2f}] from 25 reviews;") in line


def test_informative_queue_reviews_give_the_weighted_mean(run, tmp_path, capsys):
    order = queued(capsys, run, "--order", "informative")
    assert sorted(order) == list(range(80))  # every scored sample, most informative first
    import_labels(tmp_path, run, order[:20], "--queue", "informative")
    got = stats(capsys, run)
    scored, sample = informative_sample(RunStore().indexed_results(run), "faithfulness", order[:20])
    expected = weighted_corrected_mean(judged(run), {j: human(scored[j]) for j in sample.probabilities},
                                       sample.probabilities)
    assert got["queue"] == "informative" and got["n_labels"] == 20
    assert got["mean"] == pytest.approx(expected.mean)


def test_hand_picked_reviews_give_no_corrected_figure(run, tmp_path, capsys):
    import_labels(tmp_path, run, range(10))
    got = stats(capsys, run)
    assert got["queue"] is None and "mean" not in got
    assert "not a random sample" in got["note"]
    assert main(["review", "stats", run]) == 0
    assert "reviews are not a random sample (use the random or informative queue): no corrected figure" in \
        capsys.readouterr().out


def test_queue_of_an_unscored_metric_is_named(run, capsys):
    assert main(["review", "queue", run, "--metric", "answer_relevancy"]) == 2
    assert "has no 'answer_relevancy' scores; it has: faithfulness" in capsys.readouterr().err
