"""pages/_views.py helpers that need no running app."""
import pytest

from pages._views import format_duration


@pytest.mark.parametrize("seconds, text", [
    (None, "–"), (0.04, "40 ms"), (3.21, "3.2 s"), (89.9, "89.9 s"),
    (245, "4 min 05 s"), (7620, "2 h 07 min"),
])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def _drill_down_of_a_golden_in_german():
    from evaluator.model import EvalSample
    from pages import _views as views
    views.sample_view(EvalSample("Wie lange gilt die Garantie?", "", ["Die Garantie gilt zwei Jahre."],
                                 no_answer_reason="No answer: the file gives none for this row.",
                                 metadata={"language_note": "Written in German: scored with the English prompts."}))


def test_the_drill_down_says_why_a_row_has_no_answer_and_in_which_language_it_was_scored():
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_function(_drill_down_of_a_golden_in_german).run()
    assert not at.exception
    shown = " ".join(c.value for c in at.caption)
    assert "No answer: the file gives none for this row." in shown and "Written in German" in shown
