"""The CLI against a shared history: --history postgresql://..., --project, --dashboard-url, runs --owner/--project."""
from pathlib import Path

from evaluator.cli.command import main
from evaluator.store.history import RunStore

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "sample.jsonl"


def test_a_ci_run_on_postgres_prints_its_share_link_last_and_records_owner_and_project(
        postgres_url, capsys, monkeypatch):
    monkeypatch.setenv("RAGMETER_USER", "ci@example.com")
    code = main(["evaluate", str(SAMPLE), "-q", "--history", postgres_url, "--project", "support bot",
                 "--dashboard-url", "https://ragmeter.example.com/"])
    out, err = capsys.readouterr()
    assert code == 0, err
    [run] = RunStore(postgres_url).list_runs()
    assert out.strip().splitlines()[-1] == f"https://ragmeter.example.com/report?run={run.run_id}"
    assert err.strip().splitlines()[-1].startswith("ragmeter: ok:")
    assert (run.owner, run.project, run.dataset_name) == ("ci@example.com", "support bot", "sample.jsonl")
    assert run.status == "finished" and run.n_done == run.n_samples > 0

    assert main(["runs", "--history", postgres_url, "--project", "support bot"]) == 0
    assert run.run_id in capsys.readouterr().out
    assert main(["runs", "--history", postgres_url, "--owner", "someone-else"]) == 0
    assert capsys.readouterr().out.strip() == "No runs match."
