"""A run whose every user-supplied string carries a Markdown image: the run's name, the dataset's
file name, the judge model's name, a rubric's criteria, each question and each judge reply.
A page that renders any of them as Markdown makes the browser fetch `image_url`."""
from pathlib import Path

from evaluator import EvalSample
from evaluator.store.history import RunStore
from evaluator.runs.run import Run, RunConfig


def payload(image_url: str) -> str:
    return f"![x]({image_url})"


class ImageJudge:
    """A real judge (generate(prompt) -> str) whose reasoning carries the image too; it scores low,
    so the Report's advice quotes the rubric."""

    def __init__(self, text: str) -> None:
        self.text = text

    def generate(self, prompt: str) -> str:
        return '{"score": 1, "reasoning": "%s"}' % self.text.replace('"', "'")


def save_hostile_run(history: Path, image_url: str) -> str:
    """Score three hostile samples into `history` (faithfulness and a 1-5 rubric); returns the run id."""
    text = payload(image_url)
    samples = [EvalSample(f"Question {i} {text}", f"Answer {i}.", [f"Context {i} {text}"], f"Answer {i}.",
                          f"s{i}", category=f"cat {text}") for i in range(3)]
    config = RunConfig(judge="openai", model=f"model {text}", metrics=("faithfulness", "tone"),
                       rubrics={"tone": {"criteria": f"Polite {text}", "scale": "1-5"}})
    run = Run.new(config, samples, dataset_name=f"{text}.csv", store=str(history), judge=ImageJudge(text)).start()
    run.join()
    RunStore(history).rename_run(run.run_id, text)
    return run.run_id
