"""Generate page (AppTest): upload documents, generate offline or with a model (a job a worker runs), review,
save for Evaluate; another tab sees a generation in progress, stops it, and opens the test set it made."""
import time

import pytest

from apptest import no_exception, open_app
from docfiles import BIKES_MD, PDF_PAGES, make_pdf
from openai_server import ChatServer
from writer_model import WriterModel
from evaluator.runs.generation import stored_items
from evaluator.store.generations import Generations
from evaluator.store.history import RunStore
from evaluator.store.jobs import JobQueue

TIMEOUT = 60
PAGE = "pages/generate.py"


@pytest.fixture
def page(history):
    at = open_app(TIMEOUT)
    at.switch_page(PAGE).run()
    no_exception(at)
    return at


def upload_docs(at):
    at.file_uploader(key="gen_uploads").set_value([("bikes.md", BIKES_MD.encode(), "text/markdown"),
                                                   ("helmets.pdf", make_pdf(PDF_PAGES), "application/pdf")])
    return at.run()


def captions(at):
    return "\n".join(c.value for c in at.caption)


def kept(at):
    """The items of the generation the page shows, read where they live: the history (the session holds its id)."""
    gen_id = at.session_state["gen_shown"]
    assert isinstance(gen_id, str)
    return stored_items(RunStore(), gen_id)


def test_offline_generation_is_labelled_previewed_and_saved_for_evaluate(page):
    upload_docs(page)
    no_exception(page)
    assert "2 documents, 3 sections, 3 chunks" in captions(page)
    assert any("offline extractive mode" in w.value for w in page.warning)
    page.number_input(key="gen_n").set_value(3).run()
    page.button(key="gen_start").click().run()
    no_exception(page)
    items = kept(page)
    assert len(items) == 3 and {i.kind for i in items} == {"cloze"}
    assert "coverage: 2/2 documents" in captions(page)
    assert page.get("arrow_vega_lite_chart") or page.get("vega_lite_chart")  # the coverage chart
    page.button(key="gen_use").click().run()
    no_exception(page)
    name, data = page.session_state["upload"]
    assert name == "generated-testset.jsonl" and data.count(b"\n") == 3


def test_a_model_writes_items_and_the_source_chunk_is_highlighted(page):
    upload_docs(page)
    with ChatServer(responder=WriterModel()) as srv:
        page.radio(key="gen_judge").set_value("OpenAI-compatible API").run()
        page.text_input(key="gen_base_url").set_value(srv.base_url)
        page.text_input(key="gen_model").set_value("writer")
        page.number_input(key="gen_n").set_value(3)
        page.multiselect(key="gen_kinds").set_value(["single", "variant"]).run()
        page.button(key="gen_start").click().run()
        calls = len(srv.chat_requests)
    no_exception(page)
    items = kept(page)
    assert len(items) == 3 and {i.kind for i in items} <= {"single", "variant"} and calls >= 6
    shown = "\n".join(h.proto.body for h in page.get("html"))
    assert "<mark>" in shown and items[0].chunk_ids[0] in shown


def test_an_offline_shortfall_says_what_the_documents_can_give_and_offers_no_resume(page):
    upload_docs(page)
    page.number_input(key="gen_n").set_value(40).run()  # three chunks cannot give 40 distinct cloze items
    page.button(key="gen_start").click().run()
    no_exception(page)
    first = len(kept(page))
    warned = [w.value for w in page.warning if w.value.startswith(f"kept {first} of 40 items")]
    assert 0 < first < 40 and warned and "the documents can give at most" in warned[0]
    assert not [b for b in page.button if b.key == "gen_resume"]  # a resume would pick the same sentences again


def test_another_tab_opens_a_generation_that_ended_and_downloads_its_test_set(page):
    upload_docs(page)
    page.number_input(key="gen_n").set_value(3).run()
    page.button(key="gen_start").click().run()
    gen_id = page.session_state["gen_shown"]
    other = open_app(TIMEOUT)
    other.switch_page(PAGE).run()
    no_exception(other)
    assert other.selectbox(key="gen_open_pick").value == gen_id  # the newest, whoever started it
    other.button(key="gen_open").click().run()
    no_exception(other)
    assert "coverage: 2/2 documents" in captions(other)
    assert {"gen_dl_jsonl", "gen_dl_csv"} <= {b.key for b in other.get("download_button")}
    assert len(kept(other)) == 3


def test_a_generation_in_progress_is_listed_in_another_tab_and_stopped_there(page):
    """Started elsewhere (a script, another replica): this tab lists it live, and its Stop ends it."""
    from evaluator.generate.chunking import chunk_documents
    from evaluator.generate.documents import load_uploads
    from evaluator.generate.runner import GenerateSettings
    from evaluator.judges.openai import OpenAIJudge
    from evaluator.runs.generation import submit_generation
    from evaluator.runs.run import RunConfig

    class Upload:  # what load_uploads reads of a Streamlit upload
        name, data = "bikes.md", BIKES_MD.encode()

        def getvalue(self):
            return self.data

    store = RunStore()
    chunks = chunk_documents(load_uploads([Upload()]))
    with ChatServer(responder=WriterModel(), latency=0.3) as srv:
        judge = OpenAIJudge("writer", base_url=srv.base_url, api_key="k", max_retries=0)
        gen_id = submit_generation(store, chunks, GenerateSettings(n=30, workers=1, mix={"single": 1}),
                                   RunConfig(judge="openai", model="writer"), name="bikes.md", judge=judge)
        page.run()  # the page starts this process's worker for the queued generation
        no_exception(page)
        assert "Generations in progress" in [h.value for h in page.subheader]
        deadline = time.monotonic() + 30
        while JobQueue(store).get(gen_id).state != "running" and time.monotonic() < deadline:
            time.sleep(0.05)
        page.run()
        page.button(key=f"gen_stop_list_{gen_id}").click().run()
        no_exception(page)
        deadline = time.monotonic() + 30
        while JobQueue(store).get(gen_id).state != "ended" and time.monotonic() < deadline:
            time.sleep(0.05)
    info = Generations(store).get(gen_id)
    assert info.status == "stopped" and info.n_items < 30 and JobQueue(store).get(gen_id).stop_requested
