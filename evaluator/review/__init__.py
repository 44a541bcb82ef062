"""People reviewing the judge: label files in and out, the review queue, agreement figures, few-shot alignment."""
