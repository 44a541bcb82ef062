"""A CLI run with a history is never held whole (issue 28): its worker keeps no rows, its report is printed
from the summary its rows were tallied into, and `-o` is written from the history a page at a time. What the
user gets is the same as from a run held in memory: the same table, the same files, the same verdict."""
import json
import re
import threading
import time
from pathlib import Path

from evaluator.cli.command import main
from evaluator.errors import HistoryError
from evaluator.report import export
from evaluator.runs.rows import RowWriter
from evaluator.store.history import RunStore

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "sample.jsonl"
CONVERSATIONS = ROOT / "sample_data" / "conversations.jsonl"


def run_cli(capsys, *argv):
    code = main(["evaluate", *map(str, argv), "--offline", "-q"])
    out, err = capsys.readouterr()
    return code, out, err


def table(out: str) -> str:
    """The printed report without its timing figure (two runs never take the same time)."""
    return "\n".join(line.rsplit(",", 1)[0] if "samples," in line or "conversations," in line else line
                     for line in out.splitlines() if not line.startswith("wrote "))


def test_a_streamed_run_prints_and_writes_what_a_run_held_in_memory_does(tmp_path, capsys):
    history = tmp_path / "h.sqlite3"
    code, streamed, _ = run_cli(capsys, SAMPLE, "--history", history, "-o", tmp_path / "a.csv", "--labels")
    code_mem, in_memory, _ = run_cli(capsys, SAMPLE, "--no-history", "-o", tmp_path / "b.csv", "--labels")
    assert code == code_mem == 0
    assert table(streamed) == table(in_memory)
    assert "faithfulness            14 binary   0.956" in streamed  # --labels: agreement from the summary
    store = RunStore(history)
    run = store.list_runs()[0]
    report = store.load_report(run.run_id)
    # The file written a row at a time from the history is the dashboard's download of the same run, byte for byte.
    assert (tmp_path / "a.csv").read_bytes() == export.results_csv(report).encode("utf-8-sig")  # -o x.csv: with a BOM


def test_the_streamed_json_is_the_report_json_of_the_run(tmp_path, capsys):
    history = tmp_path / "h.sqlite3"
    assert run_cli(capsys, SAMPLE, "--history", history, "-o", tmp_path / "a.json")[0] == 0
    store = RunStore(history)
    run = store.list_runs()[0]
    streamed = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    whole = json.loads(export.results_json(store.load_report(run.run_id), settings=run.settings))
    assert streamed.keys() == whole.keys()
    for key in whole:
        assert streamed[key] == whole[key], key


def test_a_streamed_conversation_run_writes_its_turns(tmp_path, capsys):
    history = tmp_path / "h.sqlite3"
    code, out, _ = run_cli(capsys, CONVERSATIONS, "--history", history, "-o", tmp_path / "c.json")
    assert code == 0 and "Conversation report" in out and "per turn (mean over all assistant turns)" in out
    store = RunStore(history)
    run = store.list_runs()[0]
    streamed = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    whole = json.loads(export.results_json(store.load_report(run.run_id), settings=run.settings))
    assert streamed == whole


class SlowStore(RunStore):
    """A real SQLite history whose writes take 50 ms: slower than the run that fills it."""

    def record_results(self, *args, **kwargs):
        time.sleep(0.05)
        return super().record_results(*args, **kwargs)


def test_a_run_faster_than_its_history_waits_for_it_instead_of_piling_rows_up(tmp_path, capsys):
    code, _, _ = run_cli(capsys, SAMPLE, "--history", tmp_path / "h.sqlite3")  # a run to write rows into
    store = SlowStore(tmp_path / "h.sqlite3")
    run_id = store.list_runs()[0].run_id
    result = store.load_report(run_id).results[0]
    writer = RowWriter(store, run_id, batch=10, backlog=30).start()
    most = []

    def watch():
        while writer._thread.is_alive():
            most.append(len(writer._rows))
            time.sleep(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    for i in range(200):
        writer.add(i % 5, result, stored=True)
    writer.close()
    assert writer.saved == 200 and writer.lost == 0
    assert max(most) <= 30  # never more than the backlog waiting, however far ahead the run got


class RefusingStore(RunStore):
    """A real SQLite history that refuses the first batch of rows (a disk full for a moment, a lock)."""

    calls = 0

    def record_results(self, *args, **kwargs):
        RefusingStore.calls += 1
        if RefusingStore.calls == 1:
            raise HistoryError("disk I/O error")
        return super().record_results(*args, **kwargs)


def test_rows_the_history_refused_still_reach_the_output_and_the_exit_code_says_so(tmp_path, capsys, monkeypatch):
    from evaluator.cli import command
    from evaluator.runs import rows as row_writer

    defaults = row_writer.RowWriter.__init__.__kwdefaults__
    monkeypatch.setitem(defaults, "waits", ())  # no retries: the refused batch is lost at once
    monkeypatch.setitem(defaults, "batch", 5)  # batches of 5 rows
    monkeypatch.setitem(defaults, "every", 30.0)  # written by size, not by time
    RefusingStore.calls = 0
    monkeypatch.setattr(command, "open_store", lambda path: RefusingStore(path))
    code, out, err = run_cli(capsys, SAMPLE, "--history", tmp_path / "h.sqlite3", "-o", tmp_path / "out.csv")
    assert code == 6  # history_failed: scored, but not all of it saved
    last = err.strip().splitlines()[-1]
    lost = int(re.search(r"(\d+) rows? (?:was|were) not saved to the history \(disk I/O error\)", last).group(1))
    assert 0 < lost <= 28 and "resume the run" in last
    written = (tmp_path / "out.csv").read_text(encoding="utf-8").splitlines()
    assert len(written) == 1 + 28  # the header and every row, those the history refused included
    assert RunStore(tmp_path / "h.sqlite3").list_runs()[0].n_done == 28 - lost


def test_the_streamed_parquet_holds_the_rows_the_report_parquet_holds(tmp_path, capsys):
    import io

    import pyarrow.parquet as pq

    history = tmp_path / "h.sqlite3"
    assert run_cli(capsys, SAMPLE, "--history", history, "-o", tmp_path / "a.parquet")[0] == 0
    store = RunStore(history)
    whole = pq.read_table(io.BytesIO(export.results_parquet(store.load_report(store.list_runs()[0].run_id))))
    streamed = pq.read_table(tmp_path / "a.parquet")
    assert streamed.schema == whole.schema and streamed.to_pylist() == whole.to_pylist()


def without_timestamp(page: str) -> str:
    """The page without what differs between two renders: the time, and vl-convert's running clip-path ids."""
    page = re.sub(r"generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", "generated …", page)
    return re.sub(r"(clip|gradient_)\d+", r"\1", page)


def test_the_html_report_of_a_streamed_run_is_the_whole_reports(tmp_path, capsys):
    history = tmp_path / "h.sqlite3"
    assert run_cli(capsys, SAMPLE, "--history", history, "-o", tmp_path / "a.html")[0] == 0
    store = RunStore(history)
    run = store.list_runs()[0]
    report = store.load_report(run.run_id)
    whole = export.html_report(report, dataset_name="sample.jsonl", settings=run.settings)
    assert without_timestamp((tmp_path / "a.html").read_text(encoding="utf-8")) == without_timestamp(whole)
    # Capped, the rows stream past and only the worst are held: the same samples, worst first.
    from evaluator.scoring import summaries

    capped = export.summary_html(summaries.stored(store, run.run_id), lambda: store.iter_results(run.run_id),
                                 settings=run.settings, use_vl_convert=False, max_samples=5)
    assert without_timestamp(capped) == without_timestamp(
        export.html_report(report, settings=run.settings, use_vl_convert=False, max_samples=5))
    assert "(worst 5 of 28)" in capped
