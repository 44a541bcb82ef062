"""A small RAG app instrumented with the real OpenTelemetry SDK, exporting OTLP/HTTP protobuf.

Each request makes one trace the way OpenInference instrumentation does: a CHAIN root span with the
question and answer, a RETRIEVER child with the documents, an LLM child with the model call. The
text is this file's own (a bicycle repair shop's help desk).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Dict, List, Optional

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

TOPICS = [
    ("How often should I oil my chain?", "Every 300 km, or after any ride in the rain.",
     "Chains need a few drops of oil every 300 km and after wet rides; wipe off the excess."),
    ("What tyre pressure suits a city bike?", "Between 3.5 and 5 bar, depending on your weight.",
     "City bike tyres run at 3.5 to 5 bar; heavier riders choose the upper end."),
    ("Do you fix electric bikes?", "Yes, we service the motor and the battery of most brands.",
     "The workshop services electric bike motors and batteries from most brands."),
    ("How long does a full service take?", "About two working days.",
     "A full service takes two working days; book a slot at the counter."),
]


@dataclass
class TraceApp:
    """`ask(i)` makes trace i; `flush()` sends what is buffered; `close()` shuts the SDK down."""

    endpoint: str
    token: str = ""
    version: str = "1.4.0"
    env: str = "prod"
    gzip: bool = True
    timeout: float = 30.0
    schedule_delay_ms: int = 50
    batch_size: int = 64

    def __post_init__(self) -> None:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        self.exporter = OTLPSpanExporter(endpoint=self.endpoint, headers=headers, timeout=self.timeout,
                                         compression=Compression.Gzip if self.gzip else Compression.NoCompression)
        self.provider = TracerProvider(resource=Resource.create({"service.name": "bike-help",
                                                                 "service.version": self.version}))
        self.provider.add_span_processor(BatchSpanProcessor(self.exporter, schedule_delay_millis=self.schedule_delay_ms,
                                                            max_export_batch_size=self.batch_size,
                                                            max_queue_size=20_000))
        self.tracer = self.provider.get_tracer("tests.collect.trace_app")
        self.trace_ids: List[str] = []

    def ask(self, i: int, *, env: Optional[str] = None, answer: Optional[str] = None) -> str:
        """Trace number i (the question cycles through TOPICS); its trace id, as hex."""
        question, good, passage = TOPICS[i % len(TOPICS)]
        meta: Dict[str, str] = {"env": env or self.env, "route": "/ask", "tier": "gold" if i % 3 == 0 else "free"}
        with self.tracer.start_as_current_span("rag-query") as root:
            root.set_attribute("openinference.span.kind", "CHAIN")
            root.set_attribute("input.value", f"{question} (ticket {i})")
            root.set_attribute("metadata", json.dumps(meta))
            with self.tracer.start_as_current_span("retrieve") as retriever:
                retriever.set_attribute("openinference.span.kind", "RETRIEVER")
                retriever.set_attribute("retrieval.documents.0.document.content", passage)
                retriever.set_attribute("retrieval.documents.0.document.id", f"doc-{i % len(TOPICS)}")
                retriever.set_attribute("retrieval.documents.0.document.score", 0.9)
            with self.tracer.start_as_current_span("generate") as llm:
                llm.set_attribute("openinference.span.kind", "LLM")
                llm.set_attribute("llm.model_name", "shop-model")
            root.set_attribute("output.value", answer if answer is not None else good)
            trace_id = format(root.get_span_context().trace_id, "032x")
        self.trace_ids.append(trace_id)
        return trace_id

    def flush(self, timeout_ms: int = 60_000) -> bool:
        return bool(self.provider.force_flush(timeout_ms))

    def close(self) -> None:
        self.provider.shutdown()
