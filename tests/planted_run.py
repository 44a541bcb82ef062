"""Runs whose every text a viewer can make ragmeter draw holds U+0001 and U+FFFE (issue 49): the dataset's file
name, the run's name, a category, the judge's reasoning and a note. Such characters made the chart and PDF
renderer (vl-convert) abort the whole process.

The run is scored for real (a scripted judge whose JSON reply spells the characters as \\u escapes), then the
raw characters are planted back into the history, as a ragmeter from before the fix (or a hand-edited database)
would have left them: names and reasoning are now cleaned where they enter, and the renderers must hold anyway.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import List

from evaluator import EvalSample
from evaluator.runs.run import Run, RunConfig
from evaluator.store.history import RunStore

EVIL = "\x01\ufffe"  # U+0001: a control character XML forbids; U+FFFE: a noncharacter XML forbids
REVERSED = "\u202egpj.evil"  # U+202E RIGHT-TO-LEFT OVERRIDE: shown raw, "gpj.evil" reads as "live.jpg"
DATASET = f"evil{EVIL}{REVERSED}.jsonl"
REASONING = f"weak{EVIL} answer"
NOTE = f"a note{EVIL} {REVERSED}"
PROJECT = "planted"


class ControlJudge:
    """A real judge (generate(prompt) -> str) whose reasoning carries U+0001 and U+FFFE as JSON escapes."""

    def generate(self, prompt: str) -> str:
        return json.dumps({"score": 0.4, "reasoning": REASONING})  # ensure_ascii: "\\u0001", "\\ufffe"


def dataset_file(folder: Path) -> Path:
    """The dataset written under its hostile file name (Linux allows any character but / and NUL)."""
    path = folder / DATASET
    rows = [{"question": f"Question {i}{EVIL}?", "answer": f"Answer {i}.", "contexts": [f"Context {i}."],
             "ground_truth": f"Answer {i}.", "sample_id": f"s{i}", "category": f"cat{EVIL}{REVERSED}"} for i in range(3)]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return path


def _samples(path: Path) -> List[EvalSample]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [EvalSample(r["question"], r["answer"], r["contexts"], r["ground_truth"], r["sample_id"],
                       category=r["category"]) for r in rows]


def save_planted_run(history: Path, folder: Path, *, raw: bool = True) -> str:
    """Score the hostile dataset into `history` and (`raw`) plant the raw characters back; returns the run id."""
    path = dataset_file(folder)
    config = RunConfig(judge="openai", model="scripted", metrics=("faithfulness", "answer_relevancy"))
    run = Run.new(config, _samples(path), dataset_name=path.name, store=str(history), judge=ControlJudge(),
                  project=PROJECT).start()
    run.join()
    if raw:
        plant(RunStore(history), run.run_id)
    return run.run_id


def plant(store: RunStore, run_id: str) -> None:
    """The raw characters written straight into the history: names, every reasoning, a note."""
    store.write("UPDATE runs SET dataset_name = ?, name = ? WHERE run_id = ?", (DATASET, f"run{EVIL}", run_id))
    for idx, result in list(store.iter_results(run_id)):
        for score in result.scores.values():
            score.reasoning = REASONING
        store.record_result(run_id, idx, result)
    store.write("INSERT INTO notes (note_id, run_id, idx, sample_id, author, created_at, body) VALUES "
                "(?, ?, ?, ?, ?, ?, ?)", (f"n{run_id[:10]}", run_id, None, None, f"eve{EVIL}",
                                          "2026-01-01T00:00:00+00:00", NOTE))
