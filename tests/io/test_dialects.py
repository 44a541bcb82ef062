"""Column names: each tool's names load to the same sample; detection rules."""
import json
from pathlib import Path

import pytest

from datafiles import ROOT, csv_text, jsonl_text, write
from evaluator.io.datasets import ALIASES, FIELDS, detect_mapping, inspect_dataset, load_dataset
from evaluator.model import EvalSample

FAMILIES = {
    "seed": ["question", "answer", "contexts", "ground_truth", "sample_id"],
    "ragas": ["user_input", "response", "retrieved_contexts", "reference", "id"],
    "deepeval": ["input", "actual_output", "retrieval_context", "expected_output", "sample_id"],
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json"])
def test_alias_families_load_the_same_sample(tmp_path, family, fmt):
    q, a, c, gt, sid = FAMILIES[family]
    obj = {q: "What is the refund window?", a: "14 days.", c: ["Refund policy: 14 days."], gt: "14 days", sid: "s1"}
    if fmt == "csv":
        text = csv_text([list(obj), [obj[q], obj[a], json.dumps(obj[c]), obj[gt], obj[sid]]])
    elif fmt == "jsonl":
        text = jsonl_text([obj])
    else:
        text = json.dumps([obj])
    [sample] = load_dataset(write(tmp_path, f"d.{fmt}", text))
    assert sample == EvalSample("What is the refund window?", "14 days.", ["Refund policy: 14 days."], "14 days", "s1")


def test_headers_match_case_insensitively_and_trimmed(tmp_path):
    text = " Question ,ANSWER,  Contexts\nq,a,one context\n"
    [s] = load_dataset(write(tmp_path, "d.csv", text))
    assert (s.question, s.answer, s.contexts) == ("q", "a", ["one context"])


def test_detect_mapping_prefers_first_alias_and_keeps_spelling():
    mapping = detect_mapping(["ID", "Sample_ID", "User_Input", "response", "reference", "human_faithfulness"])
    assert mapping == {"question": "User_Input", "answer": "response", "ground_truth": "reference",
                       "sample_id": "Sample_ID"}


def test_constants_cover_every_field():
    assert set(ALIASES) == set(FIELDS)
    assert all(name in ALIASES[name] for name in FIELDS)


# --- files other tools write (tests/fixtures, each made by the tool itself: see its README) --------

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
KETTLE_Q, CARDS_Q = "How long is the kettle warranty?", "Which cards are accepted?"
KETTLE_CTX = ["Warranty: kettles are covered for two years against manufacturing defects.",
              "Shipping: orders over $40 ship free."]
CARDS_CTX = ["Payments: we take Visa and Mastercard.", "Cash is refused at the counter."]


@pytest.mark.parametrize("name, tool, expected", [
    ("deepeval_dataset.csv", "deepeval", [
        (KETTLE_Q, "Two years against manufacturing defects.", KETTLE_CTX, "Two years."),
        (CARDS_Q, "Visa and Mastercard.", ["Payments: we take Visa and Mastercard; cash is refused at the counter."],
         "Visa and Mastercard.")]),
    ("deepeval_dataset.jsonl", "deepeval", [
        (KETTLE_Q, "Two years against manufacturing defects.", KETTLE_CTX, "Two years."),
        (CARDS_Q, "Visa and Mastercard.", ["Payments: we take Visa and Mastercard; cash is refused at the counter."],
         "Visa and Mastercard.")]),
    ("deepeval_goldens.csv", "deepeval", [
        ("What does the kettle warranty cover?", "", [],  # context: the passages it was written from, not retrieved
         "Manufacturing defects for two years.")]),
    ("ragas_v0.csv", "ragas 0.0.x", [
        (KETTLE_Q, "Two years, against manufacturing defects.", KETTLE_CTX, "Two years."),
        (CARDS_Q, "Visa and Mastercard.", CARDS_CTX, "Visa and Mastercard.")]),
    ("ragas_v0.jsonl", "ragas 0.0.x", [
        (KETTLE_Q, "Two years, against manufacturing defects.", KETTLE_CTX, "Two years."),
        (CARDS_Q, "Visa and Mastercard.", CARDS_CTX, "Visa and Mastercard.")]),
    ("phoenix_qa.csv", "Phoenix", [
        (KETTLE_Q, "Two years, against manufacturing defects.", KETTLE_CTX, None),
        (CARDS_Q, "Visa and Mastercard.", CARDS_CTX, None)]),
    ("phoenix_qa.jsonl", "Phoenix", [
        (KETTLE_Q, "Two years, against manufacturing defects.", KETTLE_CTX, None),
        (CARDS_Q, "Visa and Mastercard.", CARDS_CTX, None)]),
    ("phoenix_qa_joined.csv", "Phoenix", [
        (KETTLE_Q, "Two years, against manufacturing defects.", [], "\n\n".join(KETTLE_CTX)),
        (CARDS_Q, "Visa and Mastercard.", [], "\n\n".join(CARDS_CTX))]),
    ("trulens_records_table.csv", "TruLens", [
        (KETTLE_Q, "Two years, against manufacturing defects.", [], None),
        (CARDS_Q, 'Visa and Mastercard; "cash" is refused.', [], None)]),
    ("trulens_records.csv", "TruLens", [
        (CARDS_Q, 'Visa and Mastercard; "cash" is refused.', [], None),
        (KETTLE_Q, "Two years, against manufacturing defects.", [], None)]),
])
def test_third_party_files_load_to_the_right_samples(name, tool, expected):
    samples = load_dataset(FIXTURES / name)
    assert [(s.question, s.answer, s.contexts, s.ground_truth) for s in samples] == expected
    notes = inspect_dataset(FIXTURES / name).notes
    assert notes and notes[0].startswith(tool), notes


def test_phoenix_says_which_reading_of_reference_it_took():
    listed = inspect_dataset(FIXTURES / "phoenix_qa.csv")
    assert listed.mapping["contexts"] == "reference" and "ground_truth" not in listed.mapping
    assert "read as the retrieved contexts" in listed.notes[0]
    joined = inspect_dataset(FIXTURES / "phoenix_qa_joined.csv")
    assert joined.mapping["ground_truth"] == "reference" and "contexts" not in joined.mapping
    assert "read as the reference answer" in joined.notes[0] and "map contexts to reference" in joined.notes[0]


def test_an_explicit_mapping_beats_the_phoenix_reading():
    # the joined documents are passages separated by an empty line in a CSV cell: split as a spreadsheet's are
    [s, _] = load_dataset(FIXTURES / "phoenix_qa_joined.csv", mapping={"contexts": "reference"})
    assert s.contexts == KETTLE_CTX and s.ground_truth is None


def test_ragas_v0_ground_truths_note_says_first_item():
    preview = inspect_dataset(FIXTURES / "ragas_v0.csv")
    assert preview.mapping["ground_truth"] == "ground_truths" and "the first one is the reference" in preview.notes[0]


def test_pipes_split_only_in_deepeval_files_and_warned_elsewhere(tmp_path):
    row = ["q", "a", "Refunds: 14 days | Shipping: free over $40"]
    plain = write(tmp_path, "plain.csv", csv_text([["question", "answer", "contexts"], row]))
    [s] = load_dataset(plain)
    assert s.contexts == ["Refunds: 14 days | Shipping: free over $40"]  # kept as written...
    [note] = inspect_dataset(plain).notes  # ...with a warning in the preview
    assert "Row 1's contexts holds one text with ' | ' inside" in note and "JSON list" in note
    deep = write(tmp_path, "deep.csv", csv_text([["input", "actual_output", "retrieval_context"], row]))
    [d] = load_dataset(deep)
    assert d.contexts == ["Refunds: 14 days", "Shipping: free over $40"]
    assert not any("' | '" in n for n in inspect_dataset(deep).notes)


def test_plain_files_have_no_notes():
    assert inspect_dataset(ROOT / "sample_data" / "sample.csv").notes == []


# --- deepeval's "|" join: split only where it is deepeval's joiner, and say so per row ---------------

DEEPEVAL_TABLE_CSV = (
    "input,actual_output,expected_output,retrieval_context\n"
    "Which plan is cheapest?,Basic.,Basic,\"| plan | price |\n|---|---|\n| Basic | 5 |\n| Pro | 9 |\"\n"
    "How long is the warranty?,Two years.,,Warranty: two years.|Shipping: free over $40.|Returns: 14 days.\n"
)


def test_deepeval_markdown_table_stays_one_context(tmp_path):
    from evaluator import load_dataset

    path = tmp_path / "deepeval_table.csv"
    path.write_text(DEEPEVAL_TABLE_CSV, encoding="utf-8")
    table, joined = load_dataset(path)
    assert len(table.contexts) == 1 and "| Pro | 9 |" in table.contexts[0]
    assert joined.contexts == ["Warranty: two years.", "Shipping: free over $40.", "Returns: 14 days."]


def test_deepeval_preview_shows_each_split_with_its_count(tmp_path):
    from evaluator.io.datasets import inspect_dataset

    path = tmp_path / "deepeval_table.csv"
    path.write_text(DEEPEVAL_TABLE_CSV, encoding="utf-8")
    notes = inspect_dataset(path).notes
    assert ("retrieval_context cells joined with '|' (deepeval's joiner) are split into contexts: "
            "row 1: a Markdown table, kept whole, row 2: 3.") in notes


def test_deepeval_json_with_lists_has_no_split_note(tmp_path):
    import json

    from evaluator.io.datasets import inspect_dataset

    path = tmp_path / "deepeval.json"
    path.write_text(json.dumps([{"input": "Is it covered?", "actual_output": "Yes.", "expected_output": "Yes",
                                 "retrieval_context": ["Kettles: two years.", "Toasters: one year."]}]))
    notes = inspect_dataset(path).notes
    assert notes and not any("split" in n for n in notes)


def test_deepeval_jsonl_joined_cells_are_split_and_counted():
    from pathlib import Path

    from evaluator.io.datasets import inspect_dataset

    notes = inspect_dataset(Path(__file__).resolve().parents[1] / "fixtures" / "deepeval_dataset.jsonl").notes
    assert any(n.endswith("split into contexts: row 1: 2.") for n in notes), notes  # row 2 holds one passage
