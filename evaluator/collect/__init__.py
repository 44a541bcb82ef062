"""Production traces scored as they arrive: the OTLP collector, its sampling, the live runs and their alerts."""
