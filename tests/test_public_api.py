import evaluator


def test_all_is_sorted_and_complete():
    assert evaluator.__all__ == sorted(evaluator.__all__)
    assert set(evaluator.__all__) == {
        "DatasetError", "EvalReport", "EvalResult", "EvalSample", "HistoryError", "Judge", "JudgeConfigError",
        "JudgeError", "JudgeFailed", "Metric", "MetricScore", "OfflineJudge", "OpenAIJudge", "RAGEvaluator",
        "RagmeterError", "RubricMetric", "Run", "RunConfig", "RunStore", "load_dataset", "load_rubrics", "score_frame", "summarize",
    }


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

    code = ("import sys, evaluator, evaluator.cli, evaluator.history, evaluator.io.export, evaluator.costs;"
            "import evaluator.io.records, evaluator.analysis.stats, evaluator.analysis.advice, evaluator.io.datasets;"
            "import evaluator.runs, evaluator.analysis.compare, evaluator.analysis.bands;"
            "assert 'streamlit' not in sys.modules, 'streamlit imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
