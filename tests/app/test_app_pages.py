"""Every page (AppTest): it renders without an exception, and no user text it shows is Markdown
(a run name, an upload's file name, a rubric's criteria, a question, a judge reply)."""
import pytest
from markdown_it import MarkdownIt

from apptest import no_exception, open_app
from hostile_run import payload, save_hostile_run
from pages._errors import md
from pages._nav import PAGES

TIMEOUT = 60
IMAGE = "http://127.0.0.1:9/x.png"
PARSER = MarkdownIt("commonmark")
MARKDOWN_VALUES = ("markdown", "caption", "error", "warning", "info", "success", "title", "subheader")
LABELLED = ("metric", "expander", "tab", "button", "selectbox", "multiselect", "text_area", "text_input", "radio")


@pytest.mark.parametrize("path", [page.path for page in PAGES])
def test_every_page_renders_without_an_exception(history, path):
    at = open_app(TIMEOUT)
    at.switch_page(path).run()
    no_exception(at)
    assert at.title and not at.error, [e.value for e in at.error]


def shown_markdown(at):
    """Every string the page hands to a Markdown renderer: element bodies and widget labels."""
    texts = [e.value for kind in MARKDOWN_VALUES for e in getattr(at, kind)]
    texts += [e.label for kind in LABELLED for e in at.get(kind)]
    texts += [e.proto.label for e in at.get("download_button")]
    return texts


def markdown_links(at):
    """The images and links a Markdown renderer would make of what the page shows."""
    found = []
    for text in shown_markdown(at):
        tokens = PARSER.parse(text)
        found += [(c.type, text) for t in tokens for c in (t.children or []) if c.type in ("image", "link_open")]
    return found


def assert_no_markdown_from_user_text(at):
    no_exception(at)
    assert markdown_links(at) == []


@pytest.fixture
def hostile(history):
    """Two hostile runs in the history (a comparison needs two); the newest one's id."""
    save_hostile_run(history, IMAGE)
    return save_hostile_run(history, IMAGE)


def test_history_and_report_show_a_hostile_run_as_text(hostile):
    at = open_app(TIMEOUT)
    at.switch_page("pages/history.py").run()
    assert_no_markdown_from_user_text(at)
    assert payload(IMAGE) in at.dataframe[0].value["name"].tolist()  # the table shows the name as typed
    at.button(key="btn_hist_delete").click().run()
    assert_no_markdown_from_user_text(at)
    assert any(md(payload(IMAGE)) in w.value for w in at.warning)  # the run's name, shown escaped
    at.button(key="btn_hist_compare").click().run()
    assert_no_markdown_from_user_text(at)
    at.button(key="btn_hist_open").click().run()
    assert any(t.value.endswith("Report") for t in at.title)
    assert_no_markdown_from_user_text(at)
    text = "\n".join(m.value for m in at.markdown)
    assert md(f"Polite {payload(IMAGE)}") in text  # the rubric's advice quotes its criteria, escaped
    assert any(md(payload(IMAGE)) in c.value for c in at.caption)  # dataset and model names in the header
    at.selectbox(key="rep_sample").set_value(2).run()
    assert_no_markdown_from_user_text(at)


def test_evaluate_shows_a_hostile_upload_and_rubric_as_text(history):
    at = open_app(TIMEOUT)
    name = f"{payload(IMAGE)}.csv"
    data = f"question,answer,contexts\n\"Where {payload(IMAGE)}?\",Here.,Here it is.\n".encode()
    at.radio(key="eval_source").set_value("Upload a file").run()
    at.file_uploader(key="upload_file").set_value((name, data, "text/csv")).run()
    assert_no_markdown_from_user_text(at)
    assert any(md(name) in c.value for c in at.caption)
    at.text_input(key="rubric_name").set_value("tone")
    at.text_area(key="rubric_criteria").set_value(f"Polite {payload(IMAGE)}")
    at.button(key="btn_rubric_add").click().run()
    assert_no_markdown_from_user_text(at)
    at.button(key="btn_run").click().run()
    assert_no_markdown_from_user_text(at)
    assert any(md(name) in s.value for s in at.success)


def test_a_hostile_upload_previews_as_text(history):
    """Column names and cells with Markdown, HTML and blank lines (which would end an HTML block and let
    Markdown be read) show as typed in the preview table: no link, no image, no element."""
    hostile = (f'"name\n\n![x]({IMAGE})",question,answer,contexts\n'
               f'"<b>bold</b>","[click](http://127.0.0.1:9/)\n\n# heading","${{HOME}} **not bold**",'
               f'"[""![i]({IMAGE})""]"\n').encode()
    at = open_app(TIMEOUT)
    at.radio(key="eval_source").set_value("Upload a file").run()
    at.file_uploader(key="upload_file").set_value(("hostile.csv", hostile, "text/csv")).run()
    assert_no_markdown_from_user_text(at)
    preview = next(m.value for m in at.markdown if "ragmeter-preview" in m.value)
    assert "&lt;b&gt;bold&lt;/b&gt;" in preview and "<b>" not in preview
    assert "\n" not in preview  # one HTML block: its line ends are <br>, so no blank line lets Markdown in
    assert "${HOME} **not bold**" in preview  # a variable stays text, never looked up
