"""The HTML report renders a conversation as a chat: every turn escaped, its scores beside it."""
from __future__ import annotations

import html
import re

from evaluator.conversation import Conversation, Turn
from evaluator.scoring.evaluation import RAGEvaluator
from evaluator.report.export import html_report
from evaluator.judges.offline import OfflineJudge
from evaluator.model import EvalSample

HOSTILE = '<script>alert("x")</script> **bold** <img src=x onerror=alert(1)>'
ARABIC = "كم تكلفة الدراجة الكهربائية؟"


def _report():
    convs = [
        Conversation("c-hostile", [Turn("user", HOSTILE), Turn("assistant", "A day pass costs 9 euros.",
                                                                   contexts=["A day pass costs 9 euros."]),
                                   Turn("user", "And for a year?"),
                                   Turn("assistant", "", tool_calls=[{"name": "price_lookup", "arguments": {"p": "year"},
                                                                      "output": "79 <b>euros</b>"}]),
                                   Turn("tool", "79 <b>euros</b>"),
                                   Turn("assistant", "Unrelated words entirely.", contexts=["Bikes are blue."])],
                     scenario="Find <the> prices"),
        Conversation("c-ar", [Turn("user", ARABIC), Turn("assistant", "تكلف 20 سنتًا في الدقيقة.",
                                                       contexts=["تكلف الدراجة الكهربائية 20 سنتًا في الدقيقة."])]),
    ]
    return RAGEvaluator(OfflineJudge()).evaluate_dataset([EvalSample.from_conversation(c) for c in convs])


def test_every_turn_is_in_the_report_escaped_with_its_scores():
    report = _report()
    page = html_report(report, use_vl_convert=False)
    assert "<script>" not in page and "<img src=x" not in page and "<b>euros</b>" not in page
    for conv in report.results:
        for turn in conv.conversation.turns:
            if turn.content:
                assert html.escape(turn.content, quote=False) in page or html.escape(turn.content) in page
    bubbles = re.findall(r'<div class="bubble (\w+)[^"]*" id="turn-(\d+)">', page)
    assert bubbles[:6] == [("user", "0"), ("assistant", "1"), ("user", "2"), ("assistant", "3"), ("tool", "4"),
                           ("assistant", "5")]
    assert "<h2>Conversations" in page and "price_lookup" in page and "Find &lt;the&gt; prices" in page
    assert 'dir="auto">' + ARABIC in page
    worst = report.results[0].worst_turn()
    assert f'class="bubble assistant worst" id="turn-{worst.index}"' in page
    # turn 3 only calls a tool: turn 5 is that exchange's reply, scored with both turns' calls
    assert page.count("this turn's scores") == 3
