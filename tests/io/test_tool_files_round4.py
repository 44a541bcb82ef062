"""Files other tools wrote (issue 48, round 4): deepeval 4 sourced passages and partial test runs, TruLens
records with their feedback, and the other tools' exports. Each fixture was written by the tool itself
(tests/fixtures/README.md); each field is asserted where its tool put it."""
import json
from pathlib import Path

import pytest

from evaluator import load_dataset
from evaluator.cli.command import main
from evaluator.errors import DatasetError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
KETTLE, ARABIC, CARDS = "How long is the kettle warranty?", "ما هي مدة ضمان الغلاية؟", "Which cards are accepted?"
WARRANTY = "Warranty: kettles are covered for two years against manufacturing defects."
SHIPPING = "Shipping: orders over $40 ship free."
PAYMENTS = "Payments: we take Visa and Mastercard; cash is refused at the counter."
ARABIC_WARRANTY = "الضمان: الغلايات مضمونة لمدة سنتين ضد عيوب التصنيع."


# --- deepeval 4 ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["deepeval_sources.csv", "deepeval_sources.jsonl", "deepeval_sources.json"])
def test_deepeval_sourced_passages_are_text_with_their_source_as_id(name):
    notes, warnings = [], []
    kettle, arabic, cards = load_dataset(FIXTURES / name, notes=notes, warnings=warnings)
    assert kettle.contexts == [WARRANTY, SHIPPING] and kettle.retrieval_ids == ["docs/warranty.md", "docs/shipping.md"]
    assert arabic.contexts == [ARABIC_WARRANTY] and arabic.retrieval_ids == ["docs/ar/الضمان.md"]
    assert cards.contexts == [PAYMENTS]  # a plain passage beside the sourced ones
    assert not any("deepeval_source" in c for s in (kettle, arabic, cards) for c in s.contexts)
    assert (kettle.question, kettle.answer, kettle.ground_truth) == (
        KETTLE, "Two years, against manufacturing defects.", "Two years.")
    assert "Kettles: two-year warranty." in kettle.metadata["context"]  # deepeval's ideal passages: metadata
    assert "read as TEXT, with PATH as their retrieval id" in notes[0]
    assert "context is deepeval's ideal passages" in notes[0] and "Kept as metadata, not scored: context, " in notes[0]
    assert not [w for w in warnings if "'context'" in w]  # never suggested as the retrieved contexts


def test_deepeval_goldens_context_is_not_read_as_retrieved():
    golden, = load_dataset(FIXTURES / "deepeval_goldens.csv", needs_answer=False)
    assert golden.contexts == [] and "Cover: manufacturing defects only." in golden.metadata["context"]


def test_a_deepeval_test_run_with_a_case_without_answer_loads_the_rest_and_names_it():
    notes = []
    kettle, arabic = load_dataset(FIXTURES / "deepeval_test_run_partial.json", notes=notes)
    assert [(s.sample_id, s.answer) for s in (kettle, arabic)] == [("kettle", "Two years."),
                                                                   ("arabic", "مدة الضمان سنتان.")]
    assert kettle.contexts == [WARRANTY] and kettle.metadata["external_scores"] == {"external_deepeval_faithfulness": 1.0}
    assert notes[-1] == ("3 test cases; 1 skipped (test case cards: no actualOutput: deepeval ran it without an "
                         "answer).")


def test_the_cli_scores_the_partial_test_run_and_says_which_case_it_left(capsys):
    assert main(["evaluate", str(FIXTURES / "deepeval_test_run_partial.json"), "--offline", "-q", "--no-history"]) == 0
    err = capsys.readouterr().err
    assert "test case cards: no actualOutput" in err and "2 samples scored" in err


# --- TruLens -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["trulens_feedback.csv", "trulens_feedback.json"])
def test_trulens_records_keep_scored_contexts_feedback_grades_and_record_ids(name):
    notes, warnings = [], []
    samples = {s.question: s for s in load_dataset(FIXTURES / name, notes=notes, warnings=warnings)}
    kettle, arabic, cards = samples[KETTLE], samples[ARABIC], samples[CARDS]
    assert kettle.contexts == [WARRANTY, SHIPPING] and arabic.contexts == [ARABIC_WARRANTY]  # Context Relevance_calls
    assert cards.answer == 'Visa and Mastercard; "cash" is refused.'
    assert kettle.metadata["external_scores"] == {"external_trulens_context_relevance": 0.5,
                                                  "external_trulens_answer_relevance": 1.0}
    assert all(s.sample_id.startswith("record_hash_") for s in samples.values())
    assert kettle.metadata["app_name"] == "kettle_bot"
    assert "external_trulens_context_relevance (vs context_precision)" in notes[1]
    assert "Not kept: app_json" in notes[0] and "Context Relevance_calls" in notes[0]
    assert notes[-1] == "3 records, 3 with contexts." and warnings == []  # no score column offered as contexts


def test_trulens_contexts_come_from_the_retriever_calls_without_a_context_feedback(tmp_path):
    rows = json.loads((FIXTURES / "trulens_feedback.json").read_text(encoding="utf-8"))
    for row in rows:
        del row["Context Relevance_calls"], row["Context Relevance"]
    path = tmp_path / "records.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    samples = {s.question: s for s in load_dataset(path)}
    assert samples[KETTLE].contexts == [WARRANTY, SHIPPING]  # record_json: what KettleBot.retrieve returned
    assert samples[KETTLE].metadata["external_scores"] == {"external_trulens_answer_relevance": 1.0}


def test_the_cli_scores_every_metric_of_a_trulens_export(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["evaluate", str(FIXTURES / "trulens_feedback.csv"), "--offline", "-q", "--no-history",
                 "-o", str(out)]) == 0
    means = json.loads(out.read_text(encoding="utf-8"))["mean_scores"]
    assert means["faithfulness"] is not None and means["context_precision"] is not None
    assert "looks like" not in capsys.readouterr().err


# --- Giskard RAGET -------------------------------------------------------------------------------

def test_a_giskard_report_folder_reads_answers_documents_and_correctness():
    notes, warnings = [], []
    kettle, arabic, cards = load_dataset(FIXTURES / "giskard_report", notes=notes, warnings=warnings)
    assert [s.sample_id for s in (kettle, arabic, cards)] == ["q-kettle", "q-arabic", "q-cards"]
    assert (kettle.question, kettle.answer, kettle.ground_truth) == (
        KETTLE, "Two years, against manufacturing defects.", "Two years.")
    assert kettle.contexts == [WARRANTY, SHIPPING] and arabic.contexts == [ARABIC_WARRANTY]  # agent_answer.json
    assert cards.answer == "Only Visa." and cards.metadata["correctness_reason"] == "The agent left out Mastercard."
    assert [s.metadata["external_scores"] for s in (kettle, cards)] == [
        {"external_giskard_correctness": 1.0}, {"external_giskard_correctness": 0.0}]  # metrics_results.json
    assert kettle.metadata["reference_context"].startswith("Document 1: Warranty")
    assert "agent_documents as the contexts" in notes[0] and notes[-1] == "3 questions."
    assert warnings == []  # reference_context is said in the note, never offered as contexts or reference


def test_a_giskard_report_frame_reads_agent_answer_and_says_where_the_documents_are():
    notes, warnings = [], []
    kettle, _, cards = load_dataset(FIXTURES / "giskard_report.csv", notes=notes, warnings=warnings)
    assert (kettle.sample_id, kettle.answer, kettle.ground_truth, kettle.contexts) == (
        "q-kettle", "Two years, against manufacturing defects.", "Two years.", [])
    assert cards.metadata["external_scores"] == {"external_giskard_correctness": 0.0}
    assert "the report's save() folder does" in notes[0] and warnings == []


def test_a_giskard_test_set_is_questions_and_references_without_the_seed_passage_as_either():
    notes, warnings = [], []
    samples = load_dataset(FIXTURES / "giskard_testset.jsonl", needs_answer=False, notes=notes, warnings=warnings)
    assert [(s.sample_id, s.ground_truth, s.contexts) for s in samples] == [
        ("q-kettle", "Two years.", []), ("q-arabic", "سنتان.", []), ("q-cards", "Visa and Mastercard.", [])]
    assert warnings == [] and "It holds no answers" in notes[0]


def test_a_folder_with_no_known_report_names_what_ragmeter_reads_and_its_files(tmp_path):
    (tmp_path / "notes.md").write_text("hello", encoding="utf-8")
    with pytest.raises(DatasetError, match="a folder holding no file ragmeter reads; .*Giskard RAGET report.save"):
        load_dataset(tmp_path)
    (tmp_path / "run.jsonl").write_text('{"question": "q", "answer": "a"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="is a folder, not a report ragmeter knows .*pass one of its files: "
                                           "run.jsonl$"):
        load_dataset(tmp_path)


# --- RAGChecker ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["ragchecker_input.json", "ragchecker_output.json"])
def test_ragchecker_results_give_each_field_and_doc_ids(name):
    notes, warnings = [], []
    kettle, arabic, cards = load_dataset(FIXTURES / name, notes=notes, warnings=warnings)
    assert (kettle.sample_id, kettle.question, kettle.answer, kettle.ground_truth) == (
        "kettle", KETTLE, "Two years, against manufacturing defects.", "Two years.")
    assert kettle.contexts == [WARRANTY, SHIPPING] and kettle.retrieval_ids == ["warranty", "shipping"]
    assert arabic.contexts == [ARABIC_WARRANTY] and cards.answer == "Only Visa."
    assert notes[0].startswith("RAGChecker recognised.") and notes[-1] == "3 results." and warnings == []


def test_ragchecker_output_keeps_its_metrics_as_grades_and_its_claims_as_metadata():
    notes = []
    kettle, _, cards = load_dataset(FIXTURES / "ragchecker_output.json", notes=notes)
    assert kettle.metadata["external_scores"]["external_ragchecker_context_precision"] == 0.5
    assert cards.metadata["external_scores"]["external_ragchecker_precision"] == 0.0
    assert kettle.metadata["answer2response"] == '["Entailment"]'  # metadata keeps lists as JSON text
    assert "external_ragchecker_faithfulness (vs faithfulness)" in notes[1]


def test_a_mapping_reaches_inside_ragchecker_results():
    kettle = load_dataset(FIXTURES / "ragchecker_input.json", mapping={"contexts": "retrieved_context[].doc_id"})[0]
    assert kettle.contexts == ["warranty", "shipping"]  # the user's path wins over the reading


# --- OpenAI Evals --------------------------------------------------------------------------------

def test_openai_evals_output_items_read_the_data_source_row_the_answer_and_the_graders():
    notes, warnings = [], []
    kettle, arabic = load_dataset(FIXTURES / "openai_evals_output_items.jsonl", notes=notes, warnings=warnings)
    assert (kettle.sample_id, kettle.question, kettle.answer, kettle.ground_truth) == (
        "0", KETTLE, "Two years, against manufacturing defects.", "Two years.")  # datasource_item, sample.output
    assert kettle.contexts == [WARRANTY, SHIPPING] and arabic.contexts == [ARABIC_WARRANTY]
    assert kettle.metadata["external_scores"] == {"external_openai_evals_exact_reference": 1.0,
                                                  "external_openai_evals_grounded": 0.9}
    assert (kettle.metadata["item_id"], kettle.metadata["model"]) == ("outputitem_0000", "gpt-4.1-mini")
    assert notes[-1] == ("3 output items; 1 skipped (output item outputitem_0002: the sample failed "
                         "(rate_limit_exceeded: Rate limit reached)).") and warnings == []


def test_an_output_item_without_question_in_its_row_takes_the_prompts_last_user_message(tmp_path):
    line = json.loads((FIXTURES / "openai_evals_output_items.jsonl").read_text(encoding="utf-8").splitlines()[0])
    line["datasource_item"] = {"item": {"notes": "no question here", "topic": "warranty"}}  # nested as {"item"}
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    sample, = load_dataset(path)
    assert sample.question.startswith("Answer from these passages:") and sample.question.endswith(KETTLE)
    assert sample.metadata["item.notes"] == "no question here" and sample.contexts == []


# --- LlamaIndex RetrieverEvaluator ---------------------------------------------------------------

def test_llamaindex_retriever_results_are_a_retrieval_run_with_their_grades():
    notes = []
    kettle, arabic, cards = load_dataset(FIXTURES / "llamaindex_retriever_results.json", notes=notes)
    assert (kettle.question, kettle.answer) == (KETTLE, "")
    assert kettle.retrieval_ids == ["shipping", "warranty"] and kettle.expected_docs == ["warranty"]
    assert kettle.contexts == [SHIPPING, WARRANTY] and arabic.retrieval_ids == ["warranty-ar"]
    assert cards.metadata["external_scores"]["external_llamaindex_mrr"] == 0.0
    assert kettle.metadata["external_scores"] == {"external_llamaindex_mrr": 0.5, "external_llamaindex_hit_rate": 1.0,
                                                  "external_llamaindex_precision": 0.5,
                                                  "external_llamaindex_recall": 1.0}
    assert "--metrics mrr,hit@3" in notes[0] and notes[-1] == "3 queries."


def test_the_cli_scores_llamaindex_retriever_results_with_retrieval_metrics(tmp_path):
    out = tmp_path / "r.json"
    assert main(["evaluate", str(FIXTURES / "llamaindex_retriever_results.json"), "--metrics", "mrr,hit@3",
                 "--offline", "-q", "--no-history", "-o", str(out)]) == 0
    means = json.loads(out.read_text(encoding="utf-8"))["mean_scores"]
    assert means["mrr@5"] == 0.5 and means["hit@3"] == pytest.approx(2 / 3, abs=1e-4)  # mrr: as LlamaIndex's


# --- Phoenix datasets whose output holds the answer and the reference --------------------------------

@pytest.mark.parametrize("name", ["phoenix_answers.csv", "phoenix_answers_examples.json"])
def test_a_phoenix_output_with_answer_and_reference_gives_both(name):
    notes, warnings = [], []
    kettle, arabic, cards = load_dataset(FIXTURES / name, notes=notes, warnings=warnings)
    assert (kettle.question, kettle.answer, kettle.ground_truth) == (
        KETTLE, "Two years, against manufacturing defects.", "Two years.")
    assert (arabic.answer, arabic.ground_truth) == ("مدة الضمان سنتان.", "سنتان.")
    assert (cards.answer, cards.ground_truth) == ("Only Visa.", "Visa and Mastercard.")
    assert kettle.sample_id == "RGF0YXNldEV4YW1wbGU6MQ=="  # Phoenix's example id
    assert "examples with answers" in notes[0] and "(the output holds both)" in notes[0] and warnings == []


def test_a_phoenix_golden_set_still_reads_its_output_as_the_reference():
    samples = load_dataset(FIXTURES / "phoenix_dataset.csv", needs_answer=False)
    assert [(s.answer, s.ground_truth) for s in samples[:2]] == [("", "Two years."), ("", "سنتان.")]  # no answers
