"""The judge exam's facts, as data: each `Frame` is one relation worded seven ways, each row of its `rows` fills it.

A frame's wordings, with slots filled from a row ({s} the subject, {v} the right value, {w} a wrong one, {n} a
number):

    question   what a user asks
    source     the passage that answers it
    near       the answer in the passage's own words (high word overlap, same meaning)
    other      the answer in other words (low word overlap, same meaning)
    other_wrong `other` with the value swapped (a number, a name, a side): low overlap, wrong
    flipped    the passage with one word turned into its opposite or two names swapped: high overlap, wrong
    restated   an "answer" that restates the question and answers nothing
    neighbour  a passage on the same subject, sharing its words, that does not hold the answer
    extra      a claim the passage does not make (appended to `near`: partly supported)

Written for ragmeter (never taken from a dataset). review/exam_items.py turns them into items whose
labels follow from how they were built.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Tuple

Row = Mapping[str, str]


@dataclass(frozen=True)
class Frame:
    key: str
    lang: str
    question: str
    source: str
    near: str
    other: str
    other_wrong: str
    flipped: str
    restated: str
    neighbour: str
    extra: str
    rows: Tuple[Row, ...]


EN: Tuple[Frame, ...] = (
    Frame("opened", "en", "When did {s} open to the public?",
          "{S} opened to the public in {v}, after years of restoration work.",
          "{S} opened to the public in {v}.",
          "Visitors were first let in through its doors in {v}.",
          "Visitors were first let in through its doors in {w}.",
          "{S} closed to the public in {v}, after years of restoration work.",
          "You want to know when {s} opened to the public.",
          "{S} is closed to the public every Monday, and the restoration work is paid for by the city.",
          " Entry has always been free of charge.",
          ({"s": "the Harbour Museum", "v": "1998", "w": "2009"},
           {"s": "the Old Mill Gallery", "v": "1987", "w": "1978"})),
    Frame("price", "en", "What happened to the price of {s} last year?",
          "Last year the price of {s} rose by {v} percent.",
          "The price of {s} rose by {v} percent last year.",
          "Over the past twelve months, riders have had to pay {v}% more for it.",
          "Over the past twelve months, riders have had to pay {w}% more for it.",
          "Last year the price of {s} fell by {v} percent.",
          "You are asking what happened to the price of {s} last year.",
          "The price of {s} is set every year by the transport board; fuel costs fell in the spring.",
          " The increase was the largest in a decade.",
          ({"s": "a monthly bus pass", "v": "8", "w": "3"},
           {"s": "a season rail ticket", "v": "12", "w": "21"})),
    Frame("founder", "en", "Who founded {s}?",
          "{S} was founded by {v}, a retired teacher, in the spring of 2004.",
          "{S} was founded by {v}.",
          "It was {v}, who once taught at a school, that set it up.",
          "It was {w}, who once taught at a school, that set it up.",
          "{S} was shut down by {v}, a retired teacher, in the spring of 2004.",
          "The question is who founded {s}.",
          "{S} was founded to help retired teachers, and {w} joined it in the spring of 2004, when an older club was shut down.",
          " She also served as its first treasurer.",
          ({"s": "the Riverside Reading Club", "v": "Helen Marsh", "w": "Carol Baines"},
           {"s": "the Northgate Chess Society", "v": "Ruth Okafor", "w": "Alice Penn"})),
    Frame("dogs", "en", "Are dogs allowed in {s}?",
          "Dogs are allowed in {s} as long as they are kept on a lead.",
          "Yes, dogs are allowed in {s} if they are kept on a lead.",
          "You may bring your pet there, provided it stays leashed.",
          "Pets must stay outside the gates there, leashed or not.",
          "Dogs are banned from {s}, even when they are kept on a lead.",
          "You asked whether dogs are allowed in {s}.",
          "{S} has a fenced field where dogs kept on a lead are trained on Sundays; bicycles are banned.",
          " There is also a water bowl at every gate.",
          ({"s": "Rose Park"}, {"s": "the Lakeside Gardens"})),
    Frame("medicine", "en", "Should {s} be taken before or after meals?",
          "{S} should be taken after meals, with a full glass of water.",
          "{S} should be taken after meals.",
          "Swallow them once you have finished eating.",
          "Swallow them on an empty stomach, before you eat.",
          "{S} should be taken before meals, with a full glass of water.",
          "The question is whether {s} should be taken before or after meals.",
          "{S} should be kept away from heat; shake the pack before opening it.",
          " They also cause drowsiness in most patients.",
          ({"s": "Tarivex tablets"}, {"s": "Monolet capsules"})),
    Frame("older", "en", "Who is older, {s} or her brother {v}?",
          "{S} is {n} years older than her brother {v}.",
          "{S} is older than her brother {v}, by {n} years.",
          "{V} was born {n} years after his sister.",
          "{V} was born {n} years before his sister.",
          "{S} is {n} years younger than her brother {v}.",
          "You are asking which of {s} and her brother {v} is older.",
          "{S} and her brother {v} both play in the town orchestra, which is {n} years younger than the choir.",
          " She is also the taller of the two.",
          ({"s": "Maya", "v": "Daniel", "n": "3"}, {"s": "Nora", "v": "Samuel", "n": "5"})),
    Frame("final", "en", "Which team won the {s} final?",
          "{V} beat {w} 2-1 in the {s} final.",
          "{V} won the {s} final, beating {w} 2-1.",
          "The trophy went to {v}, who edged past their rivals by a single goal.",
          "The trophy went to {w}, who edged past their rivals by a single goal.",
          "{W} beat {v} 2-1 in the {s} final.",
          "You asked which team won the {s} final.",
          "The {s} final between {v} and {w} was played in front of a full stadium, where fans beat drums all night.",
          " It was their third title in a row.",
          ({"s": "City Cup", "v": "Eastfield Rovers", "w": "Westbrook United"},
           {"s": "County Shield", "v": "Hillside Athletic", "w": "Marston Town"})),
    Frame("capacity", "en", "What is the largest number of guests {s} can hold?",
          "{S} can hold at most {v} guests.",
          "{S} can hold at most {v} guests at once.",
          "No more than {v} people are let inside at the same time.",
          "No more than {w} people are let inside at the same time.",
          "{S} must hold at least {v} guests.",
          "You want the largest number of guests {s} can hold.",
          "{S} hosts guests for weddings, and it must be booked at least {v} days ahead.",
          " It also has parking for forty cars.",
          ({"s": "the Garden Hall", "v": "120", "w": "210"}, {"s": "the Quay Room", "v": "60", "w": "16"})),
    Frame("warmest", "en", "Which month was the warmest in {s} last year?",
          "In {s}, {v} was the warmest month last year.",
          "{V} was the warmest month in {s} last year.",
          "Nowhere else in the calendar did the town see higher temperatures than in {v}.",
          "Nowhere else in the calendar did the town see higher temperatures than in {w}.",
          "In {s}, {v} was the coldest month last year.",
          "You are asking which month was the warmest in {s} last year.",
          "In {s}, the warmest months are usually the wettest and the coldest the driest; last year {w} had the most rain.",
          " It was also the sunniest month on record.",
          ({"s": "Ashford", "v": "August", "w": "January"}, {"s": "Kelby", "v": "July", "w": "March"})),
    Frame("deadline", "en", "When is the deadline to apply for {s}?",
          "Applications for {s} must arrive before {v}.",
          "All applications for {s} must arrive before {v}.",
          "Anything sent in later than {v} will not be considered.",
          "Anything sent in later than {w} will not be considered.",
          "Applications for {s} must not arrive before {v}.",
          "You asked when the deadline to apply for {s} is.",
          "Applications for {s} are read by a panel, which does not meet before {w}.",
          " Late forms are accepted with a fee.",
          ({"s": "the summer grant", "v": "15 March", "w": "15 May"},
           {"s": "the night course", "v": "1 October", "w": "1 December"})),
)

AR: Tuple[Frame, ...] = (
    Frame("opened", "ar", "متى افتُتح {s} للجمهور؟",
          "افتُتح {s} للجمهور عام {v} بعد سنوات من أعمال الترميم.",
          "افتُتح {s} للجمهور عام {v}.",
          "استقبل زواره لأول مرة في سنة {v}.",
          "استقبل زواره لأول مرة في سنة {w}.",
          "أُغلق {s} أمام الجمهور عام {v} بعد سنوات من أعمال الترميم.",
          "تسأل عن موعد افتتاح {s} للجمهور.",
          "يُغلق {s} أمام الجمهور كل يوم اثنين، وتموّل البلدية أعمال الترميم.",
          " والدخول إليه مجاني دائمًا.",
          ({"s": "متحف الميناء", "v": "1998", "w": "2009"}, {"s": "معرض الطاحونة القديمة", "v": "1987", "w": "1978"})),
    Frame("price", "ar", "ماذا حدث لسعر {s} في العام الماضي؟",
          "ارتفع سعر {s} في العام الماضي بنسبة {v} بالمئة.",
          "ارتفع سعر {s} بنسبة {v} بالمئة في العام الماضي.",
          "صار على الركاب أن يدفعوا {v}% أكثر مقابلها خلال الأشهر الاثني عشر المنصرمة.",
          "صار على الركاب أن يدفعوا {w}% أكثر مقابلها خلال الأشهر الاثني عشر المنصرمة.",
          "انخفض سعر {s} في العام الماضي بنسبة {v} بالمئة.",
          "تريد أن تعرف ماذا حدث لسعر {s} في العام الماضي.",
          "تحدد هيئة النقل سعر {s} كل عام، وقد انخفض سعر الوقود في الربيع الماضي.",
          " وكانت هذه أكبر زيادة منذ عشر سنوات.",
          ({"s": "تذكرة الحافلة الشهرية", "v": "8", "w": "3"}, {"s": "تذكرة القطار الموسمية", "v": "12", "w": "21"})),
    Frame("medicine", "ar", "هل يؤخذ دواء {s} قبل الطعام أم بعده؟",
          "يؤخذ دواء {s} بعد الطعام مع كوب كامل من الماء.",
          "يؤخذ دواء {s} بعد الطعام.",
          "تناوله حين تنتهي من وجبتك.",
          "تناوله على معدة فارغة قبل أن تأكل.",
          "يؤخذ دواء {s} قبل الطعام مع كوب كامل من الماء.",
          "سؤالك هو هل يؤخذ دواء {s} قبل الطعام أم بعده.",
          "يُحفظ دواء {s} بعيدًا عن الحرارة، وتُرجّ العلبة قبل فتحها.",
          " ويسبب النعاس لمعظم المرضى.",
          ({"s": "تاريفكس"}, {"s": "مونوليت"})),
    Frame("final", "ar", "أي فريق فاز في نهائي {s}؟",
          "تغلب {v} على {w} بهدفين مقابل هدف في نهائي {s}.",
          "فاز {v} في نهائي {s} بعد أن تغلب على {w} بهدفين مقابل هدف.",
          "ذهب اللقب إلى {v} بعد انتصار صعب بفارق هدف وحيد على منافسه.",
          "ذهب اللقب إلى {w} بعد انتصار صعب بفارق هدف وحيد على منافسه.",
          "تغلب {w} على {v} بهدفين مقابل هدف في نهائي {s}.",
          "تسأل أي فريق فاز في نهائي {s}.",
          "أقيم نهائي {s} بين {v} و{w} أمام مدرجات ممتلئة، وتغلب الجمهور على المطر.",
          " وهو لقبه الثالث على التوالي.",
          ({"s": "كأس المدينة", "v": "فريق الواحة", "w": "فريق الساحل"},
           {"s": "كأس الجامعات", "v": "فريق النخيل", "w": "فريق الجبل"})),
    Frame("dogs", "ar", "هل يُسمح بدخول الكلاب إلى {s}؟",
          "يُسمح بدخول الكلاب إلى {s} بشرط أن تكون مربوطة بمقود.",
          "نعم، يُسمح بدخول الكلاب إلى {s} إذا كانت مربوطة بمقود.",
          "يمكنك اصطحاب حيوانك الأليف ما دام مقيّدًا بسلسلة.",
          "لا يمكن للحيوانات الأليفة المرور من البوابة، سواء كانت مقيّدة بسلسلة أم طليقة.",
          "يُمنع دخول الكلاب إلى {s} حتى لو كانت مربوطة بمقود.",
          "سؤالك هو هل يُسمح بدخول الكلاب إلى {s}.",
          "في {s} ساحة مسيّجة تُدرَّب فيها الكلاب المربوطة بمقود أيام الأحد، ويُمنع فيها ركوب الدراجات.",
          " وهناك وعاء ماء عند كل بوابة.",
          ({"s": "حديقة الورود"}, {"s": "منتزه البحيرة"})),
    Frame("older", "ar", "من الأكبر سنًا، {s} أم أخوها {v}؟",
          "{s} أكبر من أخيها {v} بـ{n} سنوات.",
          "{s} أكبر من أخيها {v} بـ{n} سنوات من العمر.",
          "وُلد {v} بعد أخته بـ{n} سنوات.",
          "وُلد {v} قبل أخته بـ{n} سنوات.",
          "{s} أصغر من أخيها {v} بـ{n} سنوات.",
          "تسأل من الأكبر سنًا بين {s} وأخيها {v}.",
          "تعزف {s} وأخوها {v} في فرقة المدينة الموسيقية منذ {n} سنوات، مع عازفين أصغر سنًا.",
          " وهي أطول منه أيضًا.",
          ({"s": "سلمى", "v": "كريم", "n": "3"}, {"s": "ليلى", "v": "يوسف", "n": "5"})),
)

FRAMES: Tuple[Frame, ...] = EN + AR
