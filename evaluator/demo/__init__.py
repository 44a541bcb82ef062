"""A demo RAG pipeline shipped with ragmeter, to try targets with no setup.

    ragmeter evaluate sample_data/demo_questions.jsonl --target evaluator.demo:rag_answer --offline
    ragmeter evaluate sample_data/conversations.jsonl --target evaluator.demo:chat --offline
    python -m evaluator.demo --port 8765      # the same pipeline over HTTP: POST /ask, POST /agent
"""
from .pipeline import agent_answer, chat, rag_answer, search

__all__ = ["agent_answer", "chat", "rag_answer", "search"]
