"""People reviewing the judge: `labels` (human_<metric> label files in and out), `queue` (what to review
next), `agreement` (judge against people), `correction` (the judged mean corrected by random or
informative reviews), `alignment` (few-shot example sets built from reviews, saved and measured on
held-out samples; the sets themselves are metrics/examples.py), `entries` (a review form's verdicts, corrected
scores and notes, turned into reviews); and the judge exam: `exam_facts` (its facts as data), `exam_items`
(items generated from them so word overlap fails), `probes` (injection, position and length bias, flip rate,
contradictions), `exam` (the exam itself: agreement, kappa bands, verdicts)."""
