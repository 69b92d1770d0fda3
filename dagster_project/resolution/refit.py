"""Refit the resolution model from what the platform holds: score every Reactome-KEGG pair in the database,
cross-validate by KEGG pathway against the expert curation's dev half, then fit on all of it (`flux resolution fit`)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

from dagster_project.core.settings import FluxConfigError, FluxSettings
from dagster_project.core.stores import engine_for
from dagster_project.resolution.curation import load_curation
from dagster_project.resolution.fit import CrossValidation, cross_validate, fit_model, labels_for
from dagster_project.resolution.inputs import load_resolution_inputs
from dagster_project.resolution.model import ResolutionModel
from dagster_project.resolution.pathway_sets import active_pathway_ids

Stage = Callable[[str], AbstractContextManager[object]]


@dataclass(frozen=True)
class PlatformFit:
    pairs: int
    cross_validation: CrossValidation
    model: ResolutionModel


def fit_from_platform(settings: FluxSettings, stage: Stage = lambda _: nullcontext()) -> PlatformFit:
    """`stage(description)` wraps each long step (the CLI shows a spinner); the curation must exist."""
    from dagster_project.index.encoder import load_sentence_model

    path = settings.resolution_curation_path
    if not path.is_file():
        raise FluxConfigError("FLUX_RESOLUTION_CURATION", f"no curation file at {path}")
    engine = engine_for(settings.platform_database_url)
    encoder = load_sentence_model(settings.index.embedding_model)
    with stage("scoring pairs and embedding pathway names"):
        inputs = load_resolution_inputs(
            engine,
            lambda names: encoder.encode(
                names,
                batch_size=settings.index.embedding_batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,
            ),
        )
    curation = load_curation(path).restricted_to(active_pathway_ids(engine))
    with stage("5-fold cross-validation by KEGG pathway"):
        cv = cross_validate(inputs.features, curation)
    return PlatformFit(len(inputs.features), cv, fit_model(labels_for(inputs.features, curation)))
