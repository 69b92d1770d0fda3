"""Staleness means the data changed: the documents assets version what they wrote, every Python asset carries the
platform's code version (defs/ownership.py), so an asset that returns no version of its own gets one Dagster derives
from its code and its inputs — the same after a rerun that changed nothing. Checked on a real (ephemeral) Dagster
instance with Dagster's own staleness resolver, on small assets wired as Flux's are."""

from __future__ import annotations

import dagster as dg
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.loader import LoadingContextForTest

from dagster_project.defs.assets.documents import data_version
from dagster_project.defs.ownership import apply_ownership
from dagster_project.sources.model import Document, ParseResult

CONTENT = {"text": "Glycolysis breaks down glucose."}


def _docs(text: str) -> list[Document]:
    return [
        Document(
            type="pathway", source="reactome", external_id="R-HSA-70171", title="Glycolysis", content=text, metadata={}
        )
    ]


def _definitions() -> dg.Definitions:
    @dg.asset(group_name="sources")
    def reactome_documents() -> dg.MaterializeResult:
        return dg.MaterializeResult(data_version=data_version(_docs(CONTENT["text"]), ParseResult(), {}))

    @dg.asset(group_name="index", deps=[reactome_documents])
    def chunks() -> dg.MaterializeResult:
        return dg.MaterializeResult()

    @dg.asset(group_name="index", deps=[chunks])
    def candidate_index() -> dg.MaterializeResult:
        return dg.MaterializeResult()

    return apply_ownership(dg.Definitions(assets=[reactome_documents, chunks, candidate_index]))


def _stale(instance: dg.DagsterInstance, defs: dg.Definitions) -> set[str]:
    graph = defs.resolve_asset_graph()
    resolver = CachingStaleStatusResolver(instance, graph, LoadingContextForTest(instance))
    return {k.to_user_string() for k in graph.materializable_asset_keys if resolver.get_status(k) == StaleStatus.STALE}


def test_the_documents_version_is_what_was_written_never_when() -> None:
    base = data_version(_docs("a"), ParseResult(), {})
    assert data_version(_docs("a"), ParseResult(), {}) == base
    assert data_version(_docs("b"), ParseResult(), {}) != base


def test_a_rerun_that_changed_nothing_leaves_nothing_stale_and_a_change_marks_what_is_below() -> None:
    defs = _definitions()
    job = defs.resolve_implicit_global_asset_job_def()
    with dg.DagsterInstance.ephemeral() as instance:
        CONTENT["text"] = "Glycolysis breaks down glucose."
        assert job.execute_in_process(instance=instance).success
        assert job.execute_in_process(instance=instance, asset_selection=[dg.AssetKey("reactome_documents")]).success
        assert _stale(instance, defs) == set()  # documents rewritten, same data: nothing below is stale
        CONTENT["text"] = "Glycolysis converts glucose into pyruvate."
        assert job.execute_in_process(instance=instance, asset_selection=[dg.AssetKey("reactome_documents")]).success
        assert _stale(instance, defs) == {"chunks"}  # "Upstream data": the documents changed


def test_without_code_versions_every_rerun_would_mark_the_graph_stale() -> None:
    """The metric moves: the same assets without the platform's code version go stale on an unchanged rerun."""
    defs = _definitions()
    bare = dg.Definitions(
        assets=[a.map_asset_specs(lambda s: s.replace_attributes(code_version=None)) for a in defs.assets or []]
    )  # type: ignore[union-attr]
    job = bare.resolve_implicit_global_asset_job_def()
    with dg.DagsterInstance.ephemeral() as instance:
        CONTENT["text"] = "Glycolysis breaks down glucose."
        assert job.execute_in_process(instance=instance).success
        assert job.execute_in_process(instance=instance, asset_selection=[dg.AssetKey("chunks")]).success
        assert "candidate_index" in _stale(instance, bare)
