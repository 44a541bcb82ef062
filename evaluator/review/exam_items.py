"""The built-in judge exam: 64 short items written for ragmeter, English and Arabic, labelled by construction.

Each `Fact` is a question, the passage that answers it, the right answer, a wrong answer (one number or
name changed), an off-topic answer and an unrelated passage. Every fact makes eight items, two per
metric, whose label follows from how the item was built, not from anyone's opinion:

    faithfulness        the right answer over its passage (1)     the wrong answer over it (0)
    answer_relevancy    the right answer to the question (1)      the off-topic answer (0)
    context_precision   the passage that answers it (1)           the unrelated passage (0)
    answer_correctness  the right answer against the reference (1) the wrong answer against it (0)

Eight facts (five English, three Arabic) give 64 items: 16 per metric, half positive. A team's own
labelled file replaces them with `ragmeter judge check --exam FILE` (review/exam.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

from ..model import EvalSample

EXAM_METRICS = ("faithfulness", "answer_relevancy", "context_precision", "answer_correctness")


@dataclass(frozen=True)
class Fact:
    lang: str
    question: str
    passage: str
    right: str
    wrong: str
    off_topic: str
    unrelated: str


FACTS: Tuple[Fact, ...] = (
    Fact("en", "How many days do customers have to return an item?",
         "Customers may return any unused item within 30 days of delivery for a full refund.",
         "Unused items can be returned within 30 days of delivery for a full refund.",
         "Unused items can be returned within 90 days of delivery for a full refund.",
         "Our headquarters are painted blue and have a large car park.",
         "The staff cafeteria serves lunch from noon until two o'clock."),
    Fact("en", "Which planet is known as the Red Planet?",
         "Mars is often called the Red Planet because iron oxide on its surface gives it a reddish look.",
         "Mars is known as the Red Planet, because of the iron oxide on its surface.",
         "Jupiter is known as the Red Planet, because of the iron oxide on its surface.",
         "Bananas are rich in potassium and easy to peel.",
         "The Pacific is the largest and deepest ocean on Earth."),
    Fact("en", "When does the city library close on Saturdays?",
         "On Saturdays the city library opens at 9 a.m. and closes at 5 p.m.",
         "On Saturdays the city library closes at 5 p.m.",
         "On Saturdays the city library closes at 11 p.m.",
         "Football practice was cancelled because of the heavy rain.",
         "Parking permits for residents are issued by the town hall."),
    Fact("en", "At what temperature does water boil at sea level, in Celsius?",
         "At sea level, pure water boils at 100 degrees Celsius.",
         "At sea level water boils at 100 degrees Celsius.",
         "At sea level water boils at 70 degrees Celsius.",
         "The violin has four strings, usually tuned in fifths.",
         "Emperor penguins breed during the Antarctic winter."),
    Fact("en", "Who wrote the novel Pride and Prejudice?",
         "Pride and Prejudice is a novel by Jane Austen, first published in 1813.",
         "Pride and Prejudice was written by Jane Austen and published in 1813.",
         "Pride and Prejudice was written by Charles Dickens and published in 1813.",
         "A marathon is a little over 42 kilometres long.",
         "Tea became popular in Britain during the seventeenth century."),
    Fact("ar", "كم يومًا لدى العميل لإرجاع المنتج؟",
         "يمكن للعملاء إرجاع أي منتج غير مستخدم خلال 14 يومًا من الاستلام واسترداد المبلغ كاملًا.",
         "يمكن إرجاع المنتج غير المستخدم خلال 14 يومًا من الاستلام واسترداد المبلغ كاملًا.",
         "يمكن إرجاع المنتج غير المستخدم خلال 60 يومًا من الاستلام واسترداد المبلغ كاملًا.",
         "تشتهر مدينة فاس بأسواقها القديمة وحرفها اليدوية.",
         "يفتح مطعم الموظفين أبوابه من الساعة الثانية عشرة ظهرًا."),
    Fact("ar", "ما عاصمة المملكة العربية السعودية؟",
         "الرياض هي عاصمة المملكة العربية السعودية وأكبر مدنها من حيث عدد السكان.",
         "عاصمة المملكة العربية السعودية هي الرياض، وهي أكبر مدنها.",
         "عاصمة المملكة العربية السعودية هي جدة، وهي أكبر مدنها.",
         "يحتاج نبات الصبار إلى القليل من الماء لينمو.",
         "تقع جزر المالديف في المحيط الهندي جنوب غرب الهند."),
    Fact("ar", "متى تغلق المكتبة العامة يوم الجمعة؟",
         "تفتح المكتبة العامة يوم الجمعة في التاسعة صباحًا وتغلق في الساعة الرابعة عصرًا.",
         "تغلق المكتبة العامة يوم الجمعة في الساعة الرابعة عصرًا.",
         "تغلق المكتبة العامة يوم الجمعة في الساعة العاشرة ليلًا.",
         "كرة القدم هي الرياضة الأكثر شعبية في العالم.",
         "يُصنع الخبز من الدقيق والماء والخميرة والملح."),
)


@dataclass(frozen=True)
class ExamItem:
    """One exam question: a sample, the metric it tests, and its label (1 = the good side, 0 = the bad)."""

    item_id: str
    metric: str
    label: int
    sample: EvalSample
    lang: str


def _items_of(i: int, fact: Fact) -> List[ExamItem]:
    def item(metric: str, label: int, answer: str, contexts: List[str], reference: str = "") -> ExamItem:
        sample = EvalSample(fact.question, answer, contexts, ground_truth=reference or None,
                            sample_id=f"exam-{fact.lang}-{i + 1:02d}-{metric}-{label}")
        return ExamItem(sample.sample_id or "", metric, label, sample, fact.lang)

    return [
        item("faithfulness", 1, fact.right, [fact.passage]),
        item("faithfulness", 0, fact.wrong, [fact.passage]),
        item("answer_relevancy", 1, fact.right, [fact.passage]),
        item("answer_relevancy", 0, fact.off_topic, [fact.passage]),
        item("context_precision", 1, fact.right, [fact.passage], fact.right),
        item("context_precision", 0, fact.right, [fact.unrelated], fact.right),
        item("answer_correctness", 1, fact.right, [fact.passage], fact.passage),
        item("answer_correctness", 0, fact.wrong, [fact.passage], fact.passage),
    ]


def builtin_exam() -> List[ExamItem]:
    """The 64 built-in items, in a fixed order (fact by fact)."""
    return [item for i, fact in enumerate(FACTS) for item in _items_of(i, fact)]
