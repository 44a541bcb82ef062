"""Test-set files: written in three formats, read back by ragmeter's dataset loader; page edits."""
import pytest

from evaluator.generate.items import TestItem, apply_edits, read_testset, write_testset
from evaluator.io.datasets import load_dataset

ITEMS = [TestItem("gen-0001", "How much is a day pass?", "A day pass costs 9 euros.", ["Day passes"], ["9"],
                  "single", "en", ["day-passes#0"], "writer"),
         TestItem("gen-0002", "ما رقم هاتف المدير؟", "لا تجيب الوثائق عن هذا السؤال.", [], [], "unanswerable", "ar",
                  ["electric-bikes#1"], "writer"),
         TestItem("gen-0003", "=HYPERLINK(\"x\")", "Formula-looking text.", ["A"], ["x"], "variant", "en", ["a#0"])]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_a_written_test_set_loads_as_a_dataset_and_reads_back(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    write_testset(ITEMS, str(path))
    samples = load_dataset(path, needs_answer=False)
    assert [s.sample_id for s in samples] == ["gen-0001", "gen-0002", "gen-0003"]
    assert samples[0].expected_docs == ["Day passes"] and samples[0].expected_answer_keywords == ["9"]
    assert samples[0].ground_truth == "A day pass costs 9 euros." and samples[0].category == "single"
    back = read_testset(path)
    assert back[:2] == ITEMS[:2]
    assert back[2].question.endswith('HYPERLINK("x")')  # CSV neutralises the formula, the others keep it as is


def test_page_edits_change_and_drop_items():
    rows = [{"keep": True, "question": " How much is a day pass, in euros? ", "reference answer": "9 euros",
             "expected docs": "Day passes; Prices", "keywords": "9; euros"},
            {"keep": False, "question": "x", "reference answer": "", "expected docs": "", "keywords": ""},
            {"keep": True, "question": "  ", "reference answer": "", "expected docs": "", "keywords": ""}]
    kept = apply_edits(ITEMS, rows)
    assert len(kept) == 1 and kept[0].id == "gen-0001" and kept[0].kind == "single"
    assert (kept[0].question, kept[0].ground_truth, kept[0].expected_docs, kept[0].expected_answer_keywords) == \
        ("How much is a day pass, in euros?", "9 euros", ["Day passes", "Prices"], ["9", "euros"])
