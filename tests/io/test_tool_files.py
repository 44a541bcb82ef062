"""Files other tools wrote (issue 29): ShareGPT, deepeval test runs, Langfuse traces, inspect_ai logs, MLflow RAG
eval data, promptfoo's repeated JSONL, reranked spans. Each loads as its tool meant, without flags: the
right number of samples or conversations, contexts and turns per row, the tool's grades kept beside ours."""
import json
import zipfile
from pathlib import Path

import pytest

from evaluator import load_dataset
from evaluator.cli.command import main
from evaluator.errors import DatasetError
from evaluator.io.conversations import load_conversations

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
KETTLE, ARABIC, CARDS = "How long is the kettle warranty?", "ما هي مدة ضمان الغلاية؟", "Which cards are accepted?"
WARRANTY = "Warranty: kettles are covered for two years against manufacturing defects."


def shape(samples):
    return [(s.question, s.answer, len(s.contexts)) for s in samples]


# --- ShareGPT ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sharegpt.jsonl", "sharegpt.parquet"])
def test_sharegpt_conversations_load_with_turns_and_system_prompts_kept(name):
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    notes = []
    samples = load_dataset(FIXTURES / name, notes=notes)
    convs = [s.conversation for s in samples]
    assert [c.conversation_id for c in convs] == ["weather-1", "kettle-1", "arabic-1", "cards-1"]
    assert [[t.role for t in c.turns] for c in convs] == [
        ["user", "assistant", "tool", "assistant"], ["user", "assistant"], ["user", "assistant"],
        ["user", "assistant", "user", "assistant"]]
    assert convs[0].turns[1].tool_calls[0]["name"] == "get_weather"  # LLaMA-Factory's function_call turn
    assert convs[1].metadata["system"] == "You are the support assistant of a kitchen shop."
    assert notes[0] == ("ShareGPT: 4 conversations, 2 with a system message kept as metadata (not a turn), "
                        "1 tool output used as context of the reply after it.")


def test_a_tools_reply_is_evidence_for_the_assistant_turn_after_it():
    weather = load_dataset(FIXTURES / "sharegpt.jsonl")[0].conversation
    reply = weather.turns[3]
    assert reply.content == "It is 18 °C and cloudy in Paris."
    assert reply.contexts == ["Paris: 18 °C, cloudy, wind 10 km/h."] and reply.context_origins == ["tool"]
    exchange = weather.exchanges()[0]
    assert exchange.reply is reply  # what faithfulness scores: the reply, with the tool's output as its evidence


def test_tool_evidence_can_be_switched_off():
    weather = load_dataset(FIXTURES / "sharegpt.jsonl", tool_evidence=False)[0].conversation
    assert weather.turns[3].contexts == [] and weather.turns[3].context_origins == []
    found = load_conversations(FIXTURES / "sharegpt.jsonl", tool_evidence=False)
    assert all(not t.contexts for c in found.conversations for t in c.turns)


def test_tool_evidence_marks_survive_the_record_round_trip():
    from evaluator.conversation import Conversation

    weather = load_dataset(FIXTURES / "sharegpt.jsonl")[0].conversation
    again = Conversation.from_dict(json.loads(json.dumps(weather.to_dict())))
    assert again.turns[3].context_origins == ["tool"]


def test_cli_offline_run_of_sharegpt_scores_faithfulness_from_the_tool_output(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["evaluate", str(FIXTURES / "sharegpt.jsonl"), "--offline", "-q", "--no-history", "-o", str(out)]) == 0
    assert "ShareGPT: 4 conversations" in capsys.readouterr().err
    weather = json.loads(out.read_text(encoding="utf-8"))["conversations"][0]
    assert weather["conversation_id"] == "weather-1"
    assert weather["faithfulness"] is not None  # scored against the tool's output, not "No contexts were retrieved"


def test_cli_no_tool_evidence_leaves_the_reply_without_contexts(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["evaluate", str(FIXTURES / "sharegpt.jsonl"), "--offline", "-q", "--no-history", "--no-tool-evidence",
                 "-o", str(out)]) == 0
    assert "used as context" not in capsys.readouterr().err
    weather = json.loads(out.read_text(encoding="utf-8"))["conversations"][0]
    assert weather["conversation_id"] == "weather-1" and weather["faithfulness"] is None


# --- deepeval test runs -----------------------------------------------------------------------------

def test_deepeval_test_run_reads_test_cases_and_metric_scores():
    notes = []
    samples = load_dataset(FIXTURES / "deepeval_test_run.json", notes=notes)
    assert shape(samples) == [(KETTLE, "Two years, against manufacturing defects.", 2), (ARABIC, "مدة الضمان سنتان.", 1),
                              (CARDS, "Visa and Mastercard.", 1)]
    assert [s.sample_id for s in samples] == ["kettle", "arabic", "cards"]
    assert [s.ground_truth for s in samples] == ["Two years.", None, "Visa and Mastercard."]
    assert [s.metadata["external_scores"] for s in samples] == [
        {"external_deepeval_faithfulness": 1.0, "external_deepeval_conciseness": 0.9},
        {"external_deepeval_faithfulness": 1.0, "external_deepeval_conciseness": 1.0},
        {"external_deepeval_faithfulness": 0.5, "external_deepeval_conciseness": 0.8}]
    assert "deepeval test run recognised" in notes[0]
    assert ("external_deepeval_conciseness, external_deepeval_faithfulness (vs faithfulness)" in notes[1])
    assert notes[-1] == "3 test cases."


def test_deepeval_test_run_of_conversations_only_says_what_to_do(tmp_path):
    path = tmp_path / "test_run.json"
    path.write_text(json.dumps({"testCases": [], "conversationalTestCases": [{"name": "c", "turns": []}]}))
    with pytest.raises(DatasetError, match="conversational test cases only.*save_as"):
        load_dataset(path)


# --- inspect_ai ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["inspect_log.eval", "inspect_log.json"])
def test_inspect_log_keeps_the_question_apart_from_the_prompt_and_keeps_scores_and_targets(name):
    pytest.importorskip("zstandard")
    notes = []
    samples = {s.sample_id: s for s in load_dataset(FIXTURES / name, notes=notes)}
    assert sorted(samples) == ["arabic", "cards", "kettle"]
    kettle = samples["kettle"]
    assert kettle.question == KETTLE  # not "Answer from these passages only. ... Question: ..."
    assert kettle.answer == "Two years, against manufacturing defects."
    assert kettle.contexts == [WARRANTY, "Shipping: orders over $40 ship free."]
    assert [len(samples[i].contexts) for i in ("arabic", "cards")] == [1, 1]
    assert [samples[i].ground_truth for i in ("kettle", "arabic", "cards")] == ["Two years", "سنتان", "Visa and Mastercard"]
    assert samples["cards"].metadata["external_scores"] == {"external_inspect_includes": 0.0,
                                                           "external_inspect_faithfulness": 0.5}
    assert "inspect_ai eval log recognised" in notes[0] and notes[-1] == "3 samples, 3 with contexts."


def test_inspect_log_without_samples_says_so(tmp_path):
    path = tmp_path / "header_only.json"
    path.write_text(json.dumps({"version": 2, "status": "success", "eval": {"task": "rag"}, "results": {}}))
    with pytest.raises(DatasetError, match="inspect_ai log without samples"):
        load_dataset(path)
    archive = tmp_path / "header_only.eval"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("header.json", "{}")
    with pytest.raises(DatasetError, match="inspect_ai log without samples"):
        load_dataset(archive)


def test_a_zip_that_is_no_inspect_log_is_refused_by_name(tmp_path):
    archive = tmp_path / "other.eval"
    archive.write_bytes(b"not a zip at all")
    with pytest.raises(DatasetError, match="not an inspect_ai .eval archive"):
        load_dataset(archive)


# --- Langfuse traces ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["langfuse_traces.jsonl", "langfuse_traces.json"])
def test_langfuse_traces_use_the_documents_the_model_saw(name):
    notes = []
    kettle, cards, arabic, weather = load_dataset(FIXTURES / name, notes=notes)
    assert kettle.contexts == [WARRANTY]  # the reranker's output, not the retriever's [shipping, warranty]
    assert kettle.metadata["contexts_from"] == "reranker 'CohereRerank' output"
    assert cards.contexts == ["Payments: we take Visa and Mastercard; cash is refused at the counter."]
    assert cards.metadata["contexts_from"] == "generation 'answer' input"
    assert len(arabic.contexts) == 1 and arabic.metadata["contexts_from"] == "retriever 'retriever' output"
    assert weather.contexts == [] and weather.answer == "It is 4 degrees and raining in Oslo."
    assert (kettle.question, kettle.answer) == (KETTLE, "Two years, against manufacturing defects.")
    assert notes[-1] == ("4 traces, 3 with retrieval, 1 with contexts from the reranker, "
                         "1 with contexts from the generation.")


def test_langfuse_scores_are_grades_and_annotations_are_labels():
    kettle, cards, _, weather = load_dataset(FIXTURES / "langfuse_traces.jsonl")
    assert kettle.metadata["external_scores"] == {"external_langfuse_faithfulness": 1.0,
                                                  "external_langfuse_helpfulness": 0.8}
    assert cards.metadata["human_labels"] == {"answer_relevancy": 1.0}  # an ANNOTATION: a person's label
    assert weather.metadata["external_scores"] == {"external_langfuse_correctness": 1.0}


# --- MLflow, promptfoo, spans ------------------------------------------------------------------------

def test_mlflow_retrieved_context_objects_are_contexts():
    samples = load_dataset(FIXTURES / "mlflow_rag_data.jsonl")
    assert shape(samples) == [(KETTLE, "Two years, against manufacturing defects.", 2), (ARABIC, "مدة الضمان سنتان.", 1),
                              (CARDS, "Visa and Mastercard.", 1)]
    assert samples[0].contexts[0] == WARRANTY
    assert samples[0].retrieval_ids == ["docs/warranty.md", "docs/shipping.md"]  # ranked: hit@k, mrr, ndcg@k


def test_promptfoo_results_written_twice_are_read_once_and_the_note_says_so():
    notes = []
    samples = load_dataset(FIXTURES / "promptfoo_results_repeated.jsonl", notes=notes)
    assert len(samples) == 3
    assert notes[-1] == "3 results, 3 repeated results read once (promptfoo wrote them twice)."


def test_reranked_spans_give_the_reranker_output_and_llm_documents_win():
    kettle, cards = load_dataset(FIXTURES / "spans_rerank.json")
    assert kettle.contexts == [WARRANTY]
    assert kettle.metadata["contexts_from"] == "reranker span 'rerank' output documents"
    assert cards.contexts == ["Payments: we take Visa and Mastercard; cash is refused at the counter."]
    assert cards.metadata["contexts_from"] == "LLM span 'llm' input documents"


# --- other tools' grades and --labels ------------------------------------------------------------

def test_labels_compares_our_metric_with_the_other_tools_grade(tmp_path, capsys):
    assert main(["evaluate", str(FIXTURES / "deepeval_test_run.json"), "--offline", "-q", "--no-history",
                 "--labels"]) == 0
    out = capsys.readouterr().out
    assert "Agreement with other tools' grades" in out
    assert "faithfulness vs external_deepeval_faithfulness" in out
    assert "conciseness" not in out.split("Agreement with other tools' grades")[1]  # no metric of ours: no pair


@pytest.mark.parametrize("name", ["ragas_results.csv", "ragas_results.jsonl"])
def test_ragas_result_frames_keep_ragas_scores_as_external_grades(name):
    notes = []
    kettle, arabic, cards = load_dataset(FIXTURES / name, notes=notes)
    assert [len(s.contexts) for s in (kettle, arabic, cards)] == [2, 1, 1]
    assert kettle.metadata["external_scores"] == {
        "external_ragas_faithfulness": 1.0, "external_ragas_answer_relevancy": 0.93,
        "external_ragas_context_precision": 1.0, "external_ragas_factual_correctness_mode_f1": 0.67}
    assert "external_ragas_answer_relevancy" not in cards.metadata["external_scores"]  # ragas' NaN: no grade
    assert not any(k in s.metadata for s in (kettle, arabic, cards) for k in ("faithfulness", "answer_relevancy"))
    assert "ragas results recognised" in notes[0]
    assert "external_ragas_factual_correctness_mode_f1 (vs answer_correctness)" in notes[1]


def test_a_flat_langfuse_observations_export_is_grouped_into_its_traces():
    notes = []
    kettle, cards, arabic, weather = load_dataset(FIXTURES / "langfuse_observations.jsonl", notes=notes)
    assert (kettle.sample_id, kettle.question, kettle.contexts) == ("tr-kettle", KETTLE, [WARRANTY])  # reranked
    assert cards.metadata["contexts_from"] == "generation 'answer' input" and len(arabic.contexts) == 1
    assert weather.answer == "It is 4 degrees and raining in Oslo." and weather.contexts == []
    assert "Langfuse observations recognised" in notes[0]
    assert notes[-1] == ("4 traces, 3 with retrieval, 1 with contexts from the reranker, "
                         "1 with contexts from the generation.")


def test_observations_without_a_root_are_skipped_by_name(tmp_path):
    path = tmp_path / "observations.jsonl"
    path.write_text(json.dumps({"id": "o1", "traceId": "t1", "type": "GENERATION", "startTime": "2026-05-04T09:00:00Z",
                                "parentObservationId": "gone", "input": "q", "output": "a"}) + "\n")
    with pytest.raises(DatasetError, match="trace t1: no root observation"):
        load_dataset(path)


def test_openai_messages_tool_reply_is_evidence_too(tmp_path):
    chat = {"messages": [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        {"role": "tool", "content": "Paris: 18 °C, cloudy."},
        {"role": "assistant", "content": "It is 18 °C and cloudy in Paris."}]}
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps(chat, ensure_ascii=False) + "\n", encoding="utf-8")
    notes = []
    (sample,) = load_dataset(path, notes=notes)
    assert sample.conversation.turns[3].contexts == ["Paris: 18 °C, cloudy."]
    assert notes == ["OpenAI messages: 1 conversation, 1 tool output used as context of the reply after it."]


def test_deepeval_conversational_cases_beside_test_cases_are_named_not_dropped_silently(tmp_path):
    run = json.loads((FIXTURES / "deepeval_test_run.json").read_text(encoding="utf-8"))
    run["conversationalTestCases"] = [{"name": "returns-chat", "turns": [{"role": "user", "content": "Hi"}]}]
    path = tmp_path / "test_run.json"
    path.write_text(json.dumps(run), encoding="utf-8")
    notes = []
    assert len(load_dataset(path, notes=notes)) == 3
    assert notes[-1].startswith("4 test cases; 1 skipped (conversational test case returns-chat: a test run's "
                                "conversations are not read")


def test_an_eval_archive_without_zstandard_says_what_to_install(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "zstandard", None)  # as if the formats extra were not installed
    with pytest.raises(DatasetError, match=r"ragmeter\[formats\].*inspect log convert --to json"):
        load_dataset(FIXTURES / "inspect_log.eval")


def test_the_preview_lists_other_tools_grades():
    from evaluator.io.datasets import inspect_dataset

    notes = inspect_dataset(FIXTURES / "deepeval_test_run.json").notes
    assert any(n.startswith("Other tools' grades kept beside ours") and "external_deepeval_faithfulness (vs "
               "faithfulness)" in n and "_reason" not in n for n in notes), notes


def test_an_eval_member_that_unpacks_past_the_cap_is_refused(tmp_path, monkeypatch):
    from evaluator.io import inspect_logs

    monkeypatch.setattr(inspect_logs, "MAX_MEMBER_BYTES", 1000)
    archive = tmp_path / "bomb.eval"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("samples/x_epoch_1.json", json.dumps({"id": "x", "epoch": 1, "input": "q" * 5000, "target": "t"}))
    with pytest.raises(DatasetError, match="unpacks to"):
        load_dataset(archive)


def test_a_sharegpt_line_without_its_list_is_named(tmp_path):
    path = tmp_path / "chats.jsonl"
    good = {"conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello"}]}
    path.write_text(json.dumps(good) + "\n" + json.dumps({"id": "x", "text": "stray"}) + "\n")
    with pytest.raises(DatasetError, match=r'line 2: has no "conversations" list'):
        load_dataset(path)
