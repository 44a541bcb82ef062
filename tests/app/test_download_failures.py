"""A Report download whose file cannot be made (the renderer crashed in its child: a RenderError) fails alone: the
builder re-raises, so Streamlit fails that download, and the page's next run shows the reason in a red box, once,
with no traceback."""
from streamlit.testing.v1 import AppTest


def _a_download_fails_then_the_page_runs():
    import streamlit as st

    from evaluator.errors import RenderError
    from pages import _report_sections as sections

    def crashing() -> bytes:
        raise RenderError("the PDF summary (PDF) was not made: the renderer crashed (SIGABRT)")

    sections.download_failures()  # where the Report draws them: above its download buttons
    if st.button("click", key="click"):  # what Streamlit does on a deferred download's request, after the script
        try:
            sections.guarded(crashing, "one-page PDF summary")()
        except RenderError:
            st.session_state["raised"] = True


def test_a_failed_download_shows_its_reason_in_a_red_box_once():
    at = AppTest.from_function(_a_download_fails_then_the_page_runs).run()
    assert not at.error
    at.button(key="click").click().run()  # the build fails during this run; its box comes on the next
    assert at.session_state["raised"] and not at.exception and not at.error
    at.run()
    [box] = at.error
    assert box.value.startswith("The one-page PDF summary could not be made: the PDF summary (PDF) was not made: "
                                "the renderer crashed (SIGABRT)") and "Traceback" not in box.value
    at.run()
    assert not at.error  # shown once
