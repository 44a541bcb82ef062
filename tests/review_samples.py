"""The samples the Review page tests share (AppTest and real Chromium): an English and an Arabic answer
whose faithfulness claims were judged, one English claim unsupported, so both marks and the right-to-left
layout show. (tests/ is on sys.path under pytest: `from review_samples import ...`.)"""
from evaluator.model import EvalSample

OCTOPUS = [
    EvalSample("When did the Octopus card launch?", "The Octopus card was launched in 1997. It costs 50 dollars.",
               ["Octopus is a smart card. Launched in September 1997, it was the second contactless card system."],
               sample_id="en1"),
    EvalSample("متى أُطلقت بطاقة أوكتوبس؟", "أُطلقت بطاقة أوكتوبس عام ١٩٩٧ في هونغ كونغ.",
               ["بطاقة أوكتوبس بطاقة ذكية أُطلقت عام ١٩٩٧ في هونغ كونغ."], sample_id="ar1"),
]
# (claim, verdict) per sample, as the judge split each answer
OCTOPUS_CLAIMS = [[("The Octopus card launched in 1997", "supported"), ("The card costs 50 dollars", "unsupported")],
                  [("اطلقت بطاقة اوكتوبس عام 1997", "supported")]]
