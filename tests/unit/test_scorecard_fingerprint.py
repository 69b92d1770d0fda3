"""A scorecard's input fingerprint: equal inputs give one fingerprint, and every input that can change a number
changes it."""

from __future__ import annotations

from pathlib import Path

from dagster_project.core.settings import FluxSettings
from dagster_project.evals.fingerprint import file_digest, scorecard_inputs
from dagster_project.evals.questions import EvalQuestion
from dagster_project.evals.store import input_fingerprint

QUESTIONS = [EvalQuestion("q1", "Which genes act in glycolysis?", "pubmed_1"), EvalQuestion("q2", "What is TP53?")]


def _fingerprint(
    settings: FluxSettings,
    questions: list[EvalQuestion] = QUESTIONS,
    index: str = "v1",
    dataset: str = "d1",
    scorecard: str = "retrieval",
) -> str:
    return input_fingerprint(scorecard, scorecard_inputs(settings, index, dataset, questions))


def test_the_same_inputs_give_the_same_fingerprint_and_each_input_moves_it(tmp_path: Path) -> None:
    settings = FluxSettings(home=tmp_path)
    same = _fingerprint(settings)
    assert _fingerprint(FluxSettings(home=tmp_path)) == same
    changed = {
        "index version": _fingerprint(settings, index="v2"),
        "dataset version": _fingerprint(settings, dataset="d2"),
        "a question's text": _fingerprint(settings, [QUESTIONS[0], EvalQuestion("q2", "What is MDM2?")]),
        "one question fewer": _fingerprint(settings, QUESTIONS[:1]),
        "a retrieval setting": _fingerprint(settings.evolve(dense_top_k=settings.retrieval.dense_top_k + 1)),
        "the embedding model": _fingerprint(settings.evolve(embedding_model="other-model")),
        "the scorecard": _fingerprint(settings, scorecard="answer"),
    }
    assert all(value != same for value in changed.values()), [k for k, v in changed.items() if v == same]
    assert len(set(changed.values())) == len(changed)


def test_turning_reuse_off_or_moving_a_service_port_is_not_an_input(tmp_path: Path) -> None:
    settings = FluxSettings(home=tmp_path)
    assert _fingerprint(settings.evolve(eval_reuse_unchanged=False)) == _fingerprint(settings)
    assert _fingerprint(settings.evolve(pg_port=settings.postgres.pg_port + 1)) == _fingerprint(settings)


def test_a_file_digest_follows_the_content(tmp_path: Path) -> None:
    curation = tmp_path / "curation"
    curation.mkdir()
    (curation / "pairs.tsv").write_text("hsa00010\tR-HSA-70171\n")
    first = file_digest(curation)
    assert file_digest(curation) == first and file_digest(None) == file_digest(tmp_path / "missing") == "-"
    (curation / "pairs.tsv").write_text("hsa00010\tR-HSA-70263\n")
    assert file_digest(curation) != first
