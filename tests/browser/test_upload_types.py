"""The uploader in real Chromium takes what the CLI reads (a .jsonl.gz, an .ods), and a file it cannot read is
refused in the CLI's words, never Streamlit's "application/... files are not allowed" (issue 48)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from .pw import Page, expect
from .test_dashboard import main, open_app, wait_idle

pytestmark = pytest.mark.browser
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def choose_file(page: Page, path: Path) -> None:
    page.locator('[data-testid="stRadioOption"]').filter(has_text="Upload a file").click()
    uploader = page.locator('[data-testid="stFileUploader"]').filter(has_not_text="Import rubrics")
    uploader.locator('input[type="file"]').set_input_files(str(path))
    wait_idle(page)


@pytest.mark.parametrize("name, caption", [("sample.jsonl.gz", r"sample\.jsonl\.gz · GZIP · 28 rows"),
                                           ("sheets_two_sheets.ods", r"sheets_two_sheets\.ods · ODS · 3 rows")])
def test_a_compressed_file_and_an_ods_are_taken_and_previewed(page: Page, app_url, name, caption):
    open_app(page, app_url)
    choose_file(page, FIXTURES / name)
    expect(main(page).get_by_text(re.compile(caption))).to_be_visible()


def test_an_unknown_type_is_refused_in_the_clis_words_not_with_a_mime_type(page: Page, app_url, tmp_path):
    notes = tmp_path / "notes.docx"
    notes.write_bytes(b"PK\x03\x04 not a dataset")
    open_app(page, app_url)
    choose_file(page, notes)
    expect(main(page).get_by_text(re.compile(r"notes\.docx: unknown file type '\.docx'; ragmeter reads datasets as "
                                             r"\.csv"))).to_be_visible()
    expect(page.get_by_text(re.compile(r"files are not allowed|application/"))).to_have_count(0)
