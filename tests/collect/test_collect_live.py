"""The live run: appends from many threads get their own indices, a trace is stored once, the run grows."""
import threading

from evaluator.collect.live import LiveRuns
from evaluator.model import EvalSample
from evaluator.runs.run import RunConfig
from evaluator.store.history import RunStore


def sample(n: int) -> EvalSample:
    return EvalSample(f"Is the bell loud, case {n}?", "Loud enough for city streets.", ["The bell rings at 90 dB."],
                      sample_id=f"{n:032x}")


def test_appends_from_many_threads_get_distinct_indices_and_the_run_grows(history):
    store = RunStore(history)
    run_id = store.create_run(dataset_name="live", samples=[], settings={})
    got, errors = [], []

    def add(start: int) -> None:
        try:
            got.extend(store.append_samples(run_id, [sample(start + i) for i in range(5)]))
        except Exception as exc:  # pragma: no cover - the assertion below names it
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(k * 100,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and sorted(got) == list(range(40))
    assert store.get_run(run_id).n_samples == 40 and len(store.pending_samples(run_id)) == 40


def test_a_trace_sent_again_is_stored_once_even_after_a_restart(history):
    store = RunStore(history)
    first = LiveRuns(store, "desk", RunConfig(), day=lambda: "2026-12-04")
    run_id, stored = first.append([sample(1), sample(2), sample(1)])
    assert [i for _, i in stored] == [0, 1]
    again = LiveRuns(RunStore(history), "desk", RunConfig(), day=lambda: "2026-12-04")  # a restarted receiver
    same_run, stored = again.append([sample(2), sample(3)])
    assert same_run == run_id and [s.sample_id for s, _ in stored] == [sample(3).sample_id]
    other_day, _ = LiveRuns(store, "desk", RunConfig(), day=lambda: "2026-12-05").append([sample(1)])
    assert other_day != run_id
    info = store.get_run(run_id)
    assert (info.n_samples, info.project, info.settings["live"]) == (3, "desk", {"project": "desk", "day": "2026-12-04"})
