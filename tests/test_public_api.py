import evaluator


def test_all_is_sorted_and_complete():
    assert evaluator.__all__ == sorted(evaluator.__all__)
    assert set(evaluator.__all__) == {
        "DatasetError", "EvalReport", "EvalResult", "EvalSample", "HistoryError", "Judge", "JudgeConfigError",
        "JudgeEntry", "JudgeError", "JudgeFailed", "Metric", "MetricError", "MetricScore", "MissingExtra", "OfflineJudge",
        "OpenAIJudge", "RAGEvaluator", "RagmeterError", "RowCounts", "RubricMetric", "Run", "RunConfig", "RunStore",
        "TargetConfig", "TargetConfigError", "TargetError", "Verdict", "corrected_mean", "load_dataset", "load_rubrics",
        "register", "register_judge", "score_frame", "summarize", "verdict",
    }


def test_all_matches_what_the_package_defines_and_re_exports():
    """As httpx's test_exported_members: every public name of the package is in __all__, and back."""
    import types

    defined = {name for name, value in vars(evaluator).items()
               if not name.startswith("_") and not isinstance(value, types.ModuleType)}
    lazy = set(evaluator._LAZY)
    assert defined | lazy == set(evaluator.__all__)
    assert not defined & lazy


def test_the_package_ships_its_type_information():
    from pathlib import Path

    assert (Path(evaluator.__file__).parent / "py.typed").is_file()
    import tomllib

    project = tomllib.loads((Path(evaluator.__file__).parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["evaluator"]


def test_the_verdict_is_public_and_decides_the_exit_code():
    report = evaluator.EvalReport()
    ending = evaluator.verdict(report)
    assert isinstance(ending, evaluator.Verdict)
    assert ending.kind == "nothing_scored" and ending.exit_code == 5 and not ending.ok


def test_errors_form_one_tree():
    for name in ("DatasetError", "HistoryError", "JudgeConfigError", "JudgeError", "JudgeFailed"):
        assert issubclass(getattr(evaluator, name), evaluator.RagmeterError), name


def test_judges_satisfy_the_judge_protocol():
    assert isinstance(evaluator.OfflineJudge(), evaluator.Judge)
    judge = evaluator.OpenAIJudge("m", base_url="http://127.0.0.1:9/v1")
    try:
        assert isinstance(judge, evaluator.Judge)
    finally:
        judge.close()


def test_every_exported_name_is_importable_and_public():
    for name in evaluator.__all__:
        member = getattr(evaluator, name)
        assert member.__module__.startswith("evaluator."), name


def test_dataset_error_is_a_value_error():
    assert issubclass(evaluator.DatasetError, ValueError)


def test_library_never_imports_streamlit():
    import subprocess
    import sys

    code = ("import sys, evaluator, evaluator.cli.command, evaluator.store.history, evaluator.report.export, evaluator.scoring.costs;"
            "import evaluator.io.records, evaluator.analysis.stats, evaluator.analysis.advice, evaluator.io.datasets;"
            "import evaluator.runs.run, evaluator.analysis.compare, evaluator.analysis.bands;"
            "assert 'streamlit' not in sys.modules, 'streamlit imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
