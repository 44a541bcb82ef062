"""languages: a row in a language without prompts of its own is scored with the English ones, and says so."""
import pytest

from evaluator.report.export import html_report
from evaluator.judges.offline import OfflineJudge
from evaluator.metrics.languages import NOTE_KEY, identify
from evaluator.model import EvalSample
from evaluator.scoring.evaluation import RAGEvaluator


@pytest.mark.parametrize("code, question, answer", [
    ("de", "Wie lange gilt die Garantie für das Gerät?", "Die Garantie gilt zwei Jahre ab dem Kauf und ist nicht übertragbar."),
    ("fr", "Quelle est la durée de la garantie pour cet appareil ?", "La garantie est de deux ans et elle ne couvre pas les chutes."),
    ("es", "¿Cuánto dura la garantía del aparato?", "La garantía dura dos años y no se puede transferir a otra persona."),
    ("en", "How long is the warranty on the device?", "The warranty lasts two years and it is not transferable."),
    ("ar", "ما هي مدة الضمان؟", "مدة الضمان سنتان."),
    ("en", "Refund?", "Yes."),  # too few words to tell: English, as before
])
def test_identify_names_the_language_of_a_row(code, question, answer):
    assert identify(question, answer) == code


def test_a_german_and_a_french_row_are_scored_with_english_prompts_and_say_so_per_row_and_in_the_header():
    rows = [EvalSample("Wie lange gilt die Garantie für das Gerät?", "Die Garantie gilt zwei Jahre ab dem Kauf.",
                       ["Die Garantie für jedes Gerät gilt zwei Jahre ab dem Kauf."], sample_id="de1"),
            EvalSample("Quelle est la durée de la garantie ?", "La garantie est de deux ans pour les appareils.",
                       ["La garantie de chaque appareil est de deux ans."], sample_id="fr1"),
            EvalSample("How long is the warranty?", "The warranty lasts two years.",
                       ["Every device has a two year warranty."], sample_id="en1")]
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(rows)
    english = RAGEvaluator(OfflineJudge(), language="en").evaluate_dataset(rows)
    de, fr, en = report.results
    assert "German" in de.sample.metadata[NOTE_KEY] and "English prompts" in de.sample.metadata[NOTE_KEY]
    assert "French" in fr.sample.metadata[NOTE_KEY] and NOTE_KEY not in en.sample.metadata
    assert de.score_values() == english.results[0].score_values()  # the English heuristics, as said
    header = report.format_report()
    assert "language: 2 of 3 samples in French, German, scored with the English prompts" in header
    assert "2 of 3 samples in French, German" in html_report(report, use_vl_convert=False)
    assert NOTE_KEY not in rows[0].metadata  # the caller's sample is not changed
