"""safetext's reader-facing text (issue 49): what a renderer, a page, a sheet or a terminal is given, what a name
is stored as, and the character a note is refused for."""
import pytest

from evaluator.safetext import drawable, drawable_value, name_of, unsafe_character, without_controls


@pytest.mark.parametrize("text, shown", [
    ("plain text, tabs\tand\nnew lines", "plain text, tabs\tand\nnew lines"),
    ("a\x01b\x1b[31mc", "a\ufffdb\ufffd[31mc"),  # U+0001 (XML forbids it), ESC (a terminal acts on it)
    ("x\ufffe\uffffy", "x\ufffd\ufffdy"),  # noncharacters XML forbids
    ("lone \ud800", "lone \ufffd"),
    ("line\r\nnext\rover", "line\nnext\ufffdover"),  # CR LF is a new line; a bare CR would rewrite the line
    ("\x85 \x9b", "\ufffd \ufffd"),  # C1 controls (U+009B: CSI in some terminals)
    ("report\u202egpj.evil", "reportgpj.evil"),  # read in the order written, never "live.jpg"
    ("\u2066x\u2069 \u200e\u200f", "x "),
    ("مرحبا بالعالم", "مرحبا بالعالم"),  # right-to-left text itself is kept
])
def test_drawable(text, shown):
    assert drawable(text) == shown


def test_a_specs_keys_and_values_are_made_drawable_alike():
    spec = {"data": {"values": [{"a\x01": "v\ufffe"}]}, "encoding": {"x": {"field": "a\x01"}}, "n": 3}
    made = drawable_value(spec)
    assert made == {"data": {"values": [{"a\ufffd": "v\ufffd"}]}, "encoding": {"x": {"field": "a\ufffd"}}, "n": 3}


@pytest.mark.parametrize("name, stored", [
    ("evil\x01\ufffe\u202egpj.evil.jsonl", "evilgpj.evil.jsonl"),
    ("  two\nlines\tand  spaces ", "two lines and spaces"),
    ("بيانات.csv", "بيانات.csv"),
])
def test_name_of(name, stored):
    assert name_of(name) == stored


@pytest.mark.parametrize("text, why", [
    ("note\x01", "U+0001 (a control character) at position 5"),
    ("\x00", "U+0000 (a control character) at position 1"),
    ("ab\ufffe", "U+FFFE (a noncharacter) at position 3"),
    ("\ud800", "U+D800 (a lone surrogate) at position 1"),
    ("fine\twith\ntabs and lines, and \u202e bidi", None),
])
def test_unsafe_character(text, why):
    assert unsafe_character(text) == why


def test_a_judges_text_loses_its_control_characters_silently():
    assert without_controls("weak\x01\ufffe answer\r\nnext\x1b") == "weak answer\nnext"
