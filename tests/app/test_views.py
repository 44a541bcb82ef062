"""pages/_views.py helpers that need no running app."""
import pytest

from pages._views import format_duration


@pytest.mark.parametrize("seconds, text", [
    (None, "–"), (0.04, "40 ms"), (3.21, "3.2 s"), (89.9, "89.9 s"),
    (245, "4 min 05 s"), (7620, "2 h 07 min"),
])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text
