"""Targets, one call at a time: Python functions of every shape, HTTP endpoints on a real loopback
server with several reply shapes, the faults a pipeline has, and a bare chat model."""
import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
import textwrap
from types import SimpleNamespace

import pytest

from evaluator.errors import TargetConfigError, TargetError
from evaluator.targets import ChatTarget, FunctionTarget, HttpTarget, RetryPolicy, TargetConfig, ask
from evaluator.io.shapes import context_text, response_from_value
from openai_server import ChatServer, reply
from target_server import Raw, Stall, TargetServer

FAST = RetryPolicy(retries=2, base_delay=0.01)


# --- Python functions ------------------------------------------------------------------------

def returns_str(q):
    return f"  echo: {q} "


def returns_tuple(q):
    return "Paris.", [{"title": "France", "body": "Paris is the capital.", "similarity": 0.9}, "loose text"]


def returns_dict(q):
    return {"answer": "Done.", "tool_calls": [{"name": "search", "arguments": {"q": q}, "output": "hit: Paris"}]}


async def returns_async(q):
    await asyncio.sleep(0.01)
    return {"answer": "async " + q, "contexts": ["c1"]}


async def too_slow(q):
    await asyncio.sleep(5)
    return "never"


def raises(q):
    raise KeyError("index missing")


Document = lambda text, title: SimpleNamespace(page_content=text, metadata={"title": title})  # noqa: E731


def returns_documents(q):
    return "A.", [Document("Body one.", "Doc one"), SimpleNamespace(page_content="Untitled body.", metadata={})]


@pytest.mark.parametrize("function, answer, contexts, tools", [
    (returns_str, "echo: Q?", [], []),
    (returns_tuple, "Paris.", ["France\nParis is the capital.", "loose text"], []),
    (returns_dict, "Done.", ["search\nhit: Paris"], ["search"]),  # tool outputs become the contexts
    (returns_async, "async Q?", ["c1"], []),
    (returns_documents, "A.", ["Doc one\nBody one.", "Untitled body."], []),
])
def test_python_functions_of_every_shape(function, answer, contexts, tools):
    got = ask(FunctionTarget(function), "Q?")
    assert got.error is None
    assert (got.answer, got.contexts, [c["name"] for c in got.tool_calls]) == (answer, contexts, tools)
    assert got.latency_ms is not None and got.latency_ms >= 0


def test_async_target_timeout_and_a_raising_target_become_named_errors():
    slow = ask(FunctionTarget(too_slow, timeout=0.2), "Q?", FAST)
    assert slow.error == "the target timed out after 0.2 s" and slow.answer == ""
    boom = ask(FunctionTarget(raises), "Q?", FAST)
    assert boom.error == "the target raised KeyError: 'index missing'"


def test_target_from_a_file_path_and_from_a_module_name(tmp_path, monkeypatch):
    (tmp_path / "helper.py").write_text("PREFIX = 'from helper: '\n")
    (tmp_path / "my_rag.py").write_text(textwrap.dedent("""
        from helper import PREFIX
        def rag_answer(question):
            return PREFIX + question, [{"title": "T", "body": "B", "similarity": 0.5}]
    """))
    by_path = TargetConfig(f"{tmp_path}/my_rag.py:rag_answer").build()
    assert ask(by_path, "q").answer == "from helper: q"
    monkeypatch.chdir(tmp_path)
    by_module = TargetConfig("my_rag:rag_answer").build()
    assert ask(by_module, "q").contexts == ["T\nB"]
    assert by_module.describe() == {"kind": "python", "function": "my_rag:rag_answer", "timeout_s": 60.0}


@pytest.mark.parametrize("spec, message", [
    ("no_colon_here", "is written 'package.module:function'"),
    ("missing/file.py:f", "missing/file.py does not exist"),
    ("surely_not_a_module_xyz:f", "cannot import 'surely_not_a_module_xyz'"),
    ("json:not_there", "json has no function 'not_there'"),
])
def test_bad_python_specs_say_what_to_fix(spec, message):
    with pytest.raises(TargetConfigError, match=message.replace("(", r"\(")):
        TargetConfig(spec).build()


@pytest.mark.parametrize("value, message", [
    ({"contexts": []}, "no 'answer' key"),
    (42, "returned a int"),
    (("answer", [object()]), "a context must be text"),
    ({"answer": "a", "tool_calls": [{"arguments": {}}]}, "a tool call needs a 'name'"),
])
def test_unusable_return_values_are_named(value, message):
    with pytest.raises(TargetError, match=message):
        response_from_value(value)


def test_openai_tool_call_messages_and_deepeval_tool_calls_are_read():
    openai_call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    deepeval_call = {"name": "search", "input_parameters": {"q": "x"}, "output": ["r1"]}
    got = response_from_value({"answer": "ok", "tool_calls": [openai_call, deepeval_call, "plain_tool"]})
    assert got.tool_calls == [{"name": "get_weather", "arguments": {"city": "Oslo"}, "output": None},
                              {"name": "search", "arguments": {"q": "x"}, "output": ["r1"]},
                              {"name": "plain_tool", "arguments": {}, "output": None}]
    assert got.contexts == ['search\n["r1"]']


def test_context_dicts_take_text_from_the_usual_keys_and_titles_from_metadata():
    assert context_text({"content": "c", "metadata": {"source": "handbook.pdf"}}) == "handbook.pdf\nc"
    assert context_text({"page_content": "p"}) == "p"
    with pytest.raises(TargetError, match="no text field"):
        context_text({"title": "only a title"})


# --- HTTP endpoints ----------------------------------------------------------------------------

SHAPES = [
    ({"answer": "A", "contexts": ["c1", "c2"]}, {}, "A", ["c1", "c2"]),
    ({"output": "A", "sources": [{"title": "Refunds", "body": "30 days"}]}, {}, "A", ["Refunds\n30 days"]),
    ({"data": {"response": "A", "documents": [{"page_content": "p", "metadata": {"title": "T"}}]}}, {},
     "A", ["T\np"]),
    ({"output": {"text": "A", "context": "one context"}}, {}, "A", ["one context"]),
    ({"data": {"reply": {"text": "A"}, "hits": [{"passage": "h1"}, {"passage": "h2"}]}},
     {"answer": "data.reply.text", "contexts": "data.hits[].passage"}, "A", ["h1", "h2"]),
    ({"choices": [{"message": {"content": "A"}}]}, {"answer": "choices[0].message.content"}, "A", []),
]


@pytest.mark.parametrize("body, fields, answer, contexts", SHAPES)
def test_http_reply_shapes_found_automatically_or_by_path(body, fields, answer, contexts):
    with TargetServer(lambda req: (200, body)) as srv:
        got = ask(HttpTarget(srv.url, fields=fields), "Q?")
    assert (got.error, got.answer, got.contexts) == (None, answer, contexts)


def test_http_agent_steps_by_path():
    steps = [{"tool": "lookup", "args": {"id": 7}, "observation": "found 7"}]
    with TargetServer(lambda req: (200, {"answer": "7 found", "trace": {"steps": steps}})) as srv:
        got = ask(HttpTarget(srv.url, fields={"tool_calls": "trace.steps"}), "Q?")
    assert got.tool_calls == [{"name": "lookup", "arguments": {"id": 7}, "output": "found 7"}]


def test_body_template_escapes_the_question_and_headers_resolve_env_at_call_time(monkeypatch):
    monkeypatch.setenv("RAG_TOKEN", "s3cret-1")
    question = 'He said "hi"\nthen {left} \\ done'
    with TargetServer(lambda req: (200, {"answer": "ok"})) as srv:
        target = HttpTarget(srv.url, body='{"query": "{question}", "top_k": 3}',
                            headers=["Authorization: Bearer ${RAG_TOKEN}", "X-Team: search"])
        ask(target, question)
        monkeypatch.setenv("RAG_TOKEN", "s3cret-2")  # rotated: the next call reads the new value
        ask(target, question)
    (_, h1, body1), (_, h2, _) = srv.requests
    assert body1 == {"query": question, "top_k": 3}
    assert (h1["authorization"], h2["authorization"], h1["x-team"]) == ("Bearer s3cret-1", "Bearer s3cret-2", "search")
    described = json.dumps(TargetConfig(srv.url, headers=("Authorization: Bearer ${RAG_TOKEN}",)).settings())
    assert "s3cret" not in described and "Authorization" in described


@pytest.mark.parametrize("kwargs, message", [
    ({"body": '{"q": "x"}'}, "must contain {question}"),
    ({"body": '{"q": {question}}'}, "not JSON once {question} is filled in"),
    ({"headers": ["Authorization Bearer x"]}, "is written 'Name: value'"),
    ({"headers": ["X-Key: ${SURELY_UNSET_VAR_9}"]}, r"\$\{SURELY_UNSET_VAR_9\}, which is not set"),
    ({"fields": {"answr": "a.b"}}, "unknown target field 'answr'"),
    ({"fields": {"answer": "a..b"}}, "is not a dotted path"),
])
def test_bad_http_options_fail_before_any_call(kwargs, message):
    with pytest.raises(TargetConfigError, match=message):
        HttpTarget("http://127.0.0.1:9/ask", **kwargs)


def test_url_credentials_and_query_never_reach_the_settings():
    target = HttpTarget("https://user:pw@rag.example.com/ask?api_key=abc")
    assert target.describe()["url"] == "https://rag.example.com/ask?…"


# --- faults -------------------------------------------------------------------------------------

def test_500_is_retried_then_succeeds():
    replies = iter([(500, {"detail": "boom"}), (502, {}), (200, {"answer": "third time"})])
    with TargetServer(lambda req: next(replies)) as srv:
        got = ask(HttpTarget(srv.url), "Q?", FAST)
    assert got.answer == "third time" and len(srv.requests) == 3


def test_persistent_500_is_named_with_its_attempts():
    with TargetServer(lambda req: (500, {"detail": "index offline"})) as srv:
        got = ask(HttpTarget(srv.url), "Q?", FAST)
    assert got.error == 'HTTP 500 Internal Server Error: {"detail": "index offline"} (after 3 attempts)'
    assert len(srv.requests) == 3


def test_429_waits_for_retry_after():
    replies = iter([(429, {"error": "slow down"}, {"Retry-After": "2"}), (200, {"answer": "ok"})])
    waits = []
    with TargetServer(lambda req: next(replies)) as srv:
        got = ask(HttpTarget(srv.url), "Q?", FAST, sleep=waits.append)
    assert got.answer == "ok" and waits == [2.0]


def test_404_is_not_retried():
    with TargetServer(lambda req: (404, {"detail": "no such route"})) as srv:
        got = ask(HttpTarget(srv.url), "Q?", FAST)
    assert got.error.startswith("HTTP 404 Not Found") and len(srv.requests) == 1


def test_timeout_is_retried_and_named():
    with TargetServer(lambda req: Stall(1.0)) as srv:
        got = ask(HttpTarget(srv.url, timeout=0.2), "Q?", RetryPolicy(retries=1, base_delay=0.01))
    assert got.error == "timed out after 0.2 s (after 2 attempts)"


@pytest.mark.parametrize("reply_, message", [
    (Raw(b"<html>Bad gateway</html>"), "the reply is not valid JSON (it starts '<html>Bad gateway</html>')"),
    ({"status": "ok", "hits": []}, "the reply has no answer field (looked for answer, output"),
    ({"answer": {"nested": "x"}}, "the reply has no answer field"),
])
def test_unusable_replies_are_named(reply_, message):
    with TargetServer(lambda req: (200, reply_)) as srv:
        got = ask(HttpTarget(srv.url), "Q?", FAST)
    assert got.error.startswith(message) and len(srv.requests) == 1


def test_a_wrong_field_path_names_the_path_and_the_keys_found():
    with TargetServer(lambda req: (200, {"result": "A"})) as srv:
        got = ask(HttpTarget(srv.url, fields={"answer": "data.reply"}), "Q?", FAST)
    assert got.error == "the reply has no answer at 'data.reply' (top-level keys: result); check the field path"


def test_unreachable_endpoint_is_named():
    with TargetServer(lambda req: (200, {})) as srv:
        url = srv.url
    got = ask(HttpTarget(url), "Q?", RetryPolicy(retries=0))
    assert got.error.startswith("cannot reach http://127.0.0.1:")


# --- a bare chat model ------------------------------------------------------------------------

def test_openai_model_target_answers_from_choices(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    with ChatServer(default=reply("Paris is the capital.")) as srv:
        config = TargetConfig("openai:tiny-model", base_url=srv.base_url)
        target = config.build()
        got = ask(target, "Capital of France?")
    assert isinstance(target, ChatTarget)
    assert (got.answer, got.contexts) == ("Paris is the capital.", [])
    sent = srv.chat_requests[0]
    assert sent.body["model"] == "tiny-model" and sent.body["messages"][0]["content"] == "Capital of France?"
    assert "authorization" not in sent.headers  # OPENAI_API_KEY goes to OpenAI's URL only, not a typed one
    assert "sk-test" not in json.dumps(config.settings(target))


# --- what a run keeps, and how a resume rebuilds the target -----------------------------------

@pytest.mark.parametrize("config", [
    TargetConfig("http://127.0.0.1:9/ask", body='{"q": "{question}"}', fields={"answer": "data.text"}, timeout=5,
                 workers=2),
    TargetConfig("tests.targets.test_targets:returns_str", retries=0),
    TargetConfig("openai:tiny", base_url="http://127.0.0.1:9/v1"),
])
def test_stored_settings_rebuild_the_same_target(config):
    stored = json.loads(json.dumps(config.settings()))
    assert TargetConfig.from_settings(stored) == config


def test_resume_asks_for_header_values_again_and_never_stores_them(monkeypatch):
    monkeypatch.setenv("RAG_TOKEN", "s3cret")
    config = TargetConfig("http://127.0.0.1:9/ask", headers=("Authorization: Bearer ${RAG_TOKEN}",))
    stored = json.loads(json.dumps(config.settings()))
    assert stored["header_names"] == ["Authorization"] and "Bearer" not in json.dumps(stored)
    with pytest.raises(TargetConfigError, match="header\\(s\\) Authorization, whose values are never saved"):
        TargetConfig.from_settings(stored)
    assert TargetConfig.from_settings(stored, config.headers) == config
    with pytest.raises(TargetConfigError, match="query string"):
        TargetConfig.from_settings(TargetConfig("http://h/ask?key=1").settings())


def test_a_bare_model_run_skips_the_context_metrics_naming_the_model():
    from evaluator import OfflineJudge, RAGEvaluator
    from evaluator.model import EvalSample
    from evaluator.targets.pipeline import evaluate_with_target

    with ChatServer(default=reply("Paris.")) as srv:
        target = TargetConfig("openai:tiny-model", base_url=srv.base_url).build()
        result = evaluate_with_target(RAGEvaluator(OfflineJudge()), [EvalSample("Capital?", "", [], ground_truth="Paris")],
                                      target).results[0]
    assert result.sample.answer == "Paris." and result.sample.contexts == []
    for name in ("faithfulness", "context_precision", "context_recall"):
        assert getattr(result, name).reasoning == ("The target is a bare model (openai:tiny-model) with no "
                                                   "retrieval, so there are no contexts to judge.")
    assert not result.answer_correctness.skipped


def test_an_async_target_runs_from_a_thread_whose_event_loop_is_running():
    """In a notebook (or beside a test driver) the calling thread already runs a loop."""
    import asyncio

    async def answer(question):
        await asyncio.sleep(0.01)
        return f"answered {question}"

    target = FunctionTarget(answer, timeout=5)

    async def inside_a_running_loop():
        return target.call("Q?")

    def in_a_fresh_thread():  # this test's own thread may already run a loop (a browser test's driver)
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(inside_a_running_loop())
        finally:
            loop.close()

    with ThreadPoolExecutor(1) as pool:
        response = pool.submit(in_a_fresh_thread).result()
    assert (response.error, response.answer) == (None, "answered Q?")
