"""Generate page (AppTest): upload documents, generate offline or with a model, review, save for Evaluate."""
import pytest

from apptest import no_exception, open_app
from docfiles import BIKES_MD, PDF_PAGES, make_pdf
from openai_server import ChatServer
from writer_model import WriterModel

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


def test_offline_generation_is_labelled_previewed_and_saved_for_evaluate(page):
    upload_docs(page)
    no_exception(page)
    assert "2 documents, 3 sections, 3 chunks" in captions(page)
    assert any("offline extractive mode" in w.value for w in page.warning)
    page.number_input(key="gen_n").set_value(3).run()
    page.button(key="gen_start").click().run()
    no_exception(page)
    items = page.session_state["gen_items"]
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
    items = page.session_state["gen_items"]
    assert len(items) == 3 and {i.kind for i in items} <= {"single", "variant"} and calls >= 6
    shown = "\n".join(h.proto.body for h in page.get("html"))
    assert "<mark>" in shown and items[0].chunk_ids[0] in shown


def test_an_offline_shortfall_says_what_the_documents_can_give_and_offers_no_resume(page):
    upload_docs(page)
    page.number_input(key="gen_n").set_value(40).run()  # three chunks cannot give 40 distinct cloze items
    page.button(key="gen_start").click().run()
    no_exception(page)
    first = len(page.session_state["gen_items"])
    warned = [w.value for w in page.warning if w.value.startswith(f"kept {first} of 40 items")]
    assert 0 < first < 40 and warned and "the documents can give at most" in warned[0]
    assert not [b for b in page.button if b.key == "gen_resume"]  # a resume would pick the same sentences again
