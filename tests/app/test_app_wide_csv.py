"""Issue 42, untried: a CSV of 1,000,000 columns uploaded on the Evaluate page (AppTest). The preview
table shows its first columns and counts the rest, each mapping select offers a bounded list (the
detected columns included), and the one sample is scored. Before: a preview of a million HTML cells and
selects of a million options, megabytes per widget sent to the browser."""
import pytest

from apptest import no_exception, open_app, shown_report

COLUMNS = 1_000_000


@pytest.fixture(scope="module")
def wide_csv() -> bytes:
    header = "question,answer,contexts," + ",".join(f"c{i}" for i in range(COLUMNS))
    row = "What is box 1?,Box 1 is blue.,Box 1: blue.," + ",".join("x" for _ in range(COLUMNS))
    return (header + "\n" + row + "\n").encode()


@pytest.mark.slow
def test_a_csv_of_a_million_columns_previews_in_bounded_widgets_and_scores(wide_csv, history):
    at = open_app(120)
    at.radio(key="eval_source").set_value("Upload a file").run()
    at.file_uploader(key="upload_file").set_value(("wide.csv", wide_csv, "text/csv"))
    at.run(timeout=240)
    no_exception(at)
    captions = " ".join(c.value for c in at.caption)
    assert "1 rows · 1000003 columns" in captions
    assert "The lists offer the first 2,000 of the file's 1,000,003 columns." in captions
    (table,) = [m.value for m in at.markdown if "ragmeter-preview" in m.value]
    assert len(table) < 100_000 and "… and 999,943 more columns" in table
    selects = [s for s in at.selectbox if s.key and s.key.startswith("map_")]
    assert selects and all(len(s.options) <= 2_001 for s in selects)
    assert {s.label.rstrip(" *"): s.value for s in selects}["question"] == "question"
    at.button(key="btn_run").click().run(timeout=240)
    no_exception(at)
    (sample,) = [r.sample for r in shown_report(at).results]
    assert (sample.question, sample.answer) == ("What is box 1?", "Box 1 is blue.")
