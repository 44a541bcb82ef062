"""evaluator/service: the dashboard's one door. Its surface is public on purpose, it loads no UI or heavy library,
its writes check the session's Access, and what pages used to do themselves (parse an upload, chunk documents,
score a typed sample) it does through the library: a Spot check is a `Run`."""
import ast
import subprocess
import sys
import types
from pathlib import Path

import pytest

from evaluator import EvalSample, OfflineJudge, RAGEvaluator, service
from evaluator.config import Config, RolesConfig, ServerConfig
from evaluator.store.jobs import JobQueue

ROOT = Path(__file__).resolve().parent.parent
VIEWER = service.Access(user="vera@example.com", roles=RolesConfig(viewers=("*",)), team=True)
CSV = b"question,answer,contexts\nHow long is the warranty?,Two years.,The warranty lasts two years.\n"


class Upload:
    """What Streamlit's file uploader hands a page: a name and the bytes."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name, self.data = name, data

    def getvalue(self) -> bytes:
        return self.data


def test_all_is_sorted_and_is_exactly_what_the_door_defines():
    defined = {name for name, value in vars(service).items()
               if not name.startswith("_") and not isinstance(value, types.ModuleType)}
    assert service.__all__ == sorted(service.__all__)
    assert set(service.__all__) == set(service._LAZY) | (defined - {"annotations"})


def test_the_lazy_table_says_what_the_type_checkers_see():
    # mypy reads the TYPE_CHECKING imports, the running door reads _LAZY: the two must name the same things.
    tree = ast.parse(Path(service.__file__).read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test))
    seen = {a.asname or a.name: ("." * n.level + (n.module or ""), a.name)
            for n in block.body if isinstance(n, ast.ImportFrom) for a in n.names}
    lazy = {name: (where, name) if isinstance(where, str) else where for name, where in service._LAZY.items()}
    assert seen == lazy


def test_a_use_case_named_like_its_module_stays_the_function():
    import evaluator.service.generation  # noqa: F401  (sets the submodule on the package, but for the guard)

    assert callable(service.generation) and not isinstance(service.generation, types.ModuleType)


def test_opening_the_door_loads_no_ui_and_no_heavy_library():
    heavy = ("streamlit", "openai", "pandas", "pyarrow", "altair")
    code = f"import evaluator.service, sys; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


# --- the Spot check is a Run --------------------------------------------------------------------------
def test_a_spot_check_scores_like_the_library():
    result = service.spot_check("  How long is the warranty? ", "Two years.", "The warranty lasts two years.",
                                "Two years.", service.RunConfig(), access=service.LAPTOP_ACCESS)
    sample = EvalSample("How long is the warranty?", "Two years.", ["The warranty lasts two years."], "Two years.",
                        sample_id="spot-check")
    assert result.sample == sample
    assert result.score_values() == RAGEvaluator(OfflineJudge()).evaluate(sample).score_values()


@pytest.mark.parametrize("text, contexts", [
    ("a\nb\n\n c ", ["a", "b", "c"]),
    ("one\nline two\n---\nthree", ["one\nline two", "three"]),
    ("---\nonly\n---\n", ["only"]),
    ("", []),
])
def test_a_spot_check_reads_one_context_a_line_or_blocks_between_dashes(text, contexts):
    result = service.spot_check("Which contexts?", "", text, "", service.RunConfig(), access=service.LAPTOP_ACCESS)
    assert result.sample.contexts == contexts  # an empty answer is scored too: the user may want to see that
    assert result.sample.ground_truth is None


def test_a_spot_check_runs_through_run(monkeypatch):
    from evaluator.runs import run as run_module

    started = []
    real = run_module.Run.start
    monkeypatch.setattr(run_module.Run, "start", lambda self: started.append(self.dataset_name) or real(self))
    service.spot_check("Q?", "A.", "C.", "", service.RunConfig(), access=service.LAPTOP_ACCESS)
    assert started == [service.runs.SPOT_DATASET]


def test_a_viewer_may_not_spot_check_or_run(tmp_path):
    with pytest.raises(service.NotAllowed):
        service.spot_check("Q?", "A.", "C.", "", service.RunConfig(), access=VIEWER)
    store = service.open_history(str(tmp_path / "h.sqlite3"))
    with pytest.raises(service.NotAllowed):
        service.submit_run(store, service.RunConfig(), [EvalSample("Q?", "A.", ["C."])], dataset_name="x.csv",
                           access=VIEWER)
    assert service.list_runs(store) == []


def test_a_submitted_run_is_a_queued_job_that_its_owner_may_stop(tmp_path):
    store = service.open_history(str(tmp_path / "h.sqlite3"))
    run_id = service.submit_run(store, service.RunConfig(), [EvalSample("Q?", "A.", ["C."])], dataset_name="x.csv",
                                access=service.LAPTOP_ACCESS, owner="ana")
    found = service.job(store, run_id)
    assert service.is_active(found) and found.owner == "ana"
    assert [j.run_id for j in service.jobs_in_progress(store, generations=False)] == [run_id]
    with pytest.raises(service.NotAllowed):
        service.stop_run(store, run_id, access=VIEWER)
    service.stop_run(store, run_id, access=service.LAPTOP_ACCESS)
    assert not service.is_active(JobQueue(store).get(run_id))
    assert service.run_info(store, run_id).status == "stopped"


# --- uploads are read behind the door -------------------------------------------------------------------
def test_an_upload_is_previewed_then_loaded_under_a_mapping():
    pre = service.preview_upload(CSV, "faq.csv")
    assert (pre.format, pre.row_count, pre.missing) == ("csv", 1, [])
    assert service.preview_cells(pre) == [{"question": "How long is the warranty?", "answer": "Two years.",
                                           "contexts": "The warranty lasts two years."}]
    (sample,) = service.load_upload(CSV, "faq.csv", pre.mapping)
    assert (sample.question, sample.contexts) == ("How long is the warranty?", ["The warranty lasts two years."])


def test_an_unreadable_upload_says_why():
    with pytest.raises(service.DatasetError, match="faq.csv"):
        service.load_upload(b"answer\nTwo years.\n", "faq.csv")


def test_a_long_preview_cell_is_cut_and_a_list_is_json():
    pre = service.preview_upload(b'{"question": "' + b"q" * 400 + b'", "answer": "a", "contexts": ["x", "y"]}\n',
                                 "rows.jsonl")
    (row,) = service.preview_cells(pre)
    assert row["question"] == "q" * 297 + "…"
    assert row["contexts"] == '["x", "y"]'


def test_a_conversation_upload_is_recognised_and_read_as_one_sample_each():
    data = (ROOT / "sample_data" / "conversations.jsonl").read_bytes()
    assert service.is_conversation_upload(data, "conversations.jsonl")
    assert not service.is_conversation_upload(CSV, "faq.csv")
    found = service.load_conversation_upload(data, "conversations.jsonl")
    rows, samples = service.conversation_rows(found.conversations), service.conversation_samples(found)
    assert len(rows) == len(samples) == len(found.conversations) > 0
    assert all(s.conversation is not None for s in samples)
    assert rows[0]["first user message"] == service.first_user_message(found.conversations[0])


def test_an_upload_token_changes_with_the_reading_options():
    assert service.upload_token(CSV, (), True) == service.upload_token(CSV, (), True)
    assert service.upload_token(CSV, (), True) != service.upload_token(CSV, (), False)


# --- documents are chunked behind the door --------------------------------------------------------------
def test_uploaded_documents_are_chunked():
    files = [Upload("bikes.md", b"# Bikes\n\nA bike needs a bell. Lights are needed at night.\n"),
             Upload("cars.txt", b"Cars need a licence plate.")]
    chunks = service.upload_chunks(files, 1200)
    assert len({c.title for c in chunks}) == 2 and "Bikes" in {c.title for c in chunks}
    assert "bell" in " ".join(c.text for c in chunks)


def test_a_chunk_is_shown_escaped_with_the_referenced_sentence_marked():
    chunk = service.upload_chunks([Upload("a.md", b"Bells <b>ring</b> loudly. Lights shine at night.")], 1200)[0]
    shown = service.source_html(chunk, "Lights shine brightly at night")
    assert "<mark>Lights shine at night.</mark>" in shown
    assert "&lt;b&gt;ring&lt;/b&gt;" in shown and "<b>ring</b>" not in shown


# --- the rest a view asks for --------------------------------------------------------------------------
@pytest.mark.parametrize("server_history, team, typed, want", [
    ("/srv/team.sqlite3", True, None, "/srv/team.sqlite3"),
    ("", False, None, "default"),
    ("", False, "/etc/passwd", "default"),  # refused: the sidebar says why, the default stays in use
    ("", True, "mine.sqlite3", "default"),  # team mode never takes a typed history
])
def test_the_history_location(server_history, team, typed, want, monkeypatch):
    monkeypatch.delenv("RAGMETER_HISTORY")  # the team file's history applies when the environment names none
    config = Config(server=ServerConfig(shared=team, history=server_history))
    got = service.history_location(config, typed)
    assert got == (service.default_history() if want == "default" else want)


def test_the_dashboard_resolves_the_history_as_the_cli_does(tmp_path, monkeypatch):
    from evaluator.team import settings

    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "env.sqlite3"))
    config = Config(server=ServerConfig(shared=True, history="/srv/team.sqlite3"))
    assert service.history_location(config) == str(tmp_path / "env.sqlite3") == settings.history(team=config).value


def test_the_form_becomes_reviews_on_the_metric_scale():
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset([EvalSample("Q?", "A.", ["A."], "A.", sample_id="s1")])
    info = service.RunInfo(run_id="r1", name=None, dataset_name="d", created_at="", status="finished", n_samples=1,
                           n_done=1, total_time=None, overall_mean=None, settings={"judge": "offline"})
    result = report.results[0]
    names = [ms.name for ms in service.reviewable(result)]
    entries = [service.ReviewEntry(names[0], service.DISAGREE, 0.25, "too high"),
               service.ReviewEntry(names[1], None)]  # no verdict: not reviewed
    from evaluator.review.entries import reviews_of

    (review,) = reviews_of(info, 0, result, "ana", "worst", entries)
    assert (review.metric, review.corrected, review.note, review.sample_id) == (names[0], 0.25, "too high", "s1")
    assert [e.verdict for e in service.agree_with_all(result)] == [service.AGREE] * len(names)


def test_a_laptop_resumes_with_the_runs_own_settings():
    assert service.resumed_config(Config(), {"judge": "openai", "model": "m"}) is None


def test_report_tables_filter_like_the_history():
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(
        [EvalSample(f"Q{i}?", f"A{i}.", [f"A{i}."], sample_id=f"s{i}", category="x" if i else "y") for i in range(3)])
    frame = service.report_frame(report)
    assert list(frame["#"]) == [0, 1, 2] and "overall" in service.score_columns(frame)
    assert list(service.select_rows(frame, categories=["y"])["sample_id"]) == ["s0"]
    assert list(service.select_rows(frame, text="q2")["#"]) == [2]


def test_run_files_write_a_report_held_in_memory():
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset([EvalSample("Q?", "A.", ["A."], sample_id="s1")])
    summary = service.report_summary(report, {})
    files = service.run_files("d.csv", summary, {}, report=report)
    assert b"s1" in files.csv() and b"s1" in files.json()
    assert "ragmeter report: d.csv" in files.html()
