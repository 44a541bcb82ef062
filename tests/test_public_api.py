import evaluator


def test_all_is_sorted_and_complete():
    assert evaluator.__all__ == sorted(evaluator.__all__)
    assert set(evaluator.__all__) == {
        "DatasetError", "EvalReport", "EvalResult", "EvalSample", "MetricScore",
        "OfflineJudge", "OpenAIJudge", "RAGEvaluator", "load_dataset", "score_frame",
    }


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
            "assert 'streamlit' not in sys.modules, 'streamlit imported'")
    subprocess.run([sys.executable, "-c", code], check=True)
