"""People reviewing the judge: label files in and out, the review queue, agreement figures, the judged mean
corrected by reviews (correction), few-shot alignment."""
