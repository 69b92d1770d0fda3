"""Snapshot ingest end to end: raw pulls → documents and structured tables, idempotent by construction. The full
snapshot (../shared/data) loads into a database of its own: the shared demo platform holds the bundled demo."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from dagster_project.core.settings import FluxSettings, get_settings
from dagster_project.core.stores import engine_for
from dagster_project.defs.materialize import materialize_selection
from dagster_project.evals.questions import KNOWN_COUNTERPARTS
from dagster_project.sources.raw import RawPull, latest_manifest, load_files, write_pull
from dagster_project.storage.checksums import table_checksums

# The whole snapshot, materialized and resolved: `make test-extended`.
pytestmark = [pytest.mark.shared_data, pytest.mark.slow]
SOURCES_SELECTION = "group:raw or group:sources or key:postgres_schema"


@pytest.fixture(scope="module")
def snapshot_loaded(stack: FluxSettings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FluxSettings]:
    if not Path(stack.sources.snapshot_dir).is_dir():
        pytest.skip(f"snapshot data not found at {stack.sources.snapshot_dir}")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FLUX_SOURCE_MODE", "snapshot")
        mp.setenv("FLUX_RAW_ROOT", str(tmp_path_factory.mktemp("raw")))
        get_settings.cache_clear()
        outcome = materialize_selection(get_settings(), SOURCES_SELECTION)
        assert outcome.success, outcome
        assert outcome.checks_passed == outcome.checks_total > 0
        yield get_settings()
    get_settings.cache_clear()


def _scalar(settings: FluxSettings, sql: str, **params: object) -> int:
    with engine_for(settings.platform_database_url).connect() as conn:
        return conn.execute(text(sql), params).scalar_one()


def _snapshot_of_documents(settings: FluxSettings) -> dict[tuple[str, str], tuple]:
    with engine_for(settings.platform_database_url).connect() as conn:
        rows = conn.execute(text("SELECT source, external_id, content_hash, updated_at, status FROM documents"))
        return {(r.source, r.external_id): (r.content_hash, r.updated_at, r.status) for r in rows}


def test_snapshot_counts_per_source(snapshot_loaded: FluxSettings) -> None:
    s = snapshot_loaded
    count = "SELECT count(*) FROM documents WHERE source = :src AND status = 'active'"
    assert _scalar(s, count, src="reactome") >= 2600
    assert _scalar(s, count, src="kegg") >= 330
    assert _scalar(s, count, src="pubmed") == 1000
    assert _scalar(s, count, src="openalex") >= 170
    assert _scalar(s, "SELECT count(*) FROM gene_identifiers") >= 40_000
    assert _scalar(s, "SELECT count(*) FROM gene_identifiers WHERE cardinality(uniprot_ids) > 0") >= 19_000
    assert _scalar(s, "SELECT count(DISTINCT pathway_id) FROM pathway_members WHERE id_space = 'uniprot'") >= 2500
    assert _scalar(s, "SELECT count(*) FROM raw_pulls WHERE mode = 'snapshot'") >= 5
    assert _scalar(s, "SELECT count(*) FROM documents WHERE dataset_version IS NULL") == 0
    # The four reaction exports: every reaction's pathway is listed, so none is left dangling.
    assert _scalar(s, "SELECT count(*) FROM reactions") == 93
    assert _scalar(s, "SELECT count(*) FROM reaction_participants") >= 300
    assert _scalar(s, "SELECT count(*) FROM reaction_steps") >= 25
    assert _scalar(s, count.replace("source = :src", "type = 'reaction' AND source = :src"), src="reactome") >= 80


def test_second_materialization_changes_nothing(snapshot_loaded: FluxSettings) -> None:
    before = _snapshot_of_documents(snapshot_loaded)
    members = _scalar(snapshot_loaded, "SELECT count(*) FROM pathway_members")
    reaction_rows = _scalar(
        snapshot_loaded,
        "SELECT (SELECT count(*) FROM reaction_participants) * 1000 + (SELECT count(*) FROM reaction_steps)",
    )
    genes_stamp = _scalar(snapshot_loaded, "SELECT extract(epoch FROM max(updated_at))::bigint FROM gene_identifiers")
    engine = engine_for(snapshot_loaded.platform_database_url)
    tables = table_checksums(engine)  # every table, every column: quarantine and its sightings included
    outcome = materialize_selection(snapshot_loaded, "group:sources")
    assert outcome.success
    changed = {name for name, digest in table_checksums(engine).items() if tables.get(name) != digest}
    assert not changed, f"a rerun over the same pulls rewrote {sorted(changed)}"
    assert _scalar(snapshot_loaded, "SELECT count(*) FROM quarantine") > 0  # the snapshot's bad records, met again
    assert _snapshot_of_documents(snapshot_loaded) == before
    assert _scalar(snapshot_loaded, "SELECT count(*) FROM pathway_members") == members
    assert (
        _scalar(
            snapshot_loaded,
            "SELECT (SELECT count(*) FROM reaction_participants) * 1000 + (SELECT count(*) FROM reaction_steps)",
        )
        == reaction_rows
    )
    assert (
        _scalar(snapshot_loaded, "SELECT extract(epoch FROM max(updated_at))::bigint FROM gene_identifiers")
        == genes_stamp
    )


def test_one_changed_and_one_removed_record_touch_exactly_those_rows(snapshot_loaded: FluxSettings) -> None:
    s = snapshot_loaded
    manifest = latest_manifest("openalex", s.raw_root_path)
    files = load_files(manifest, s.raw_root_path)
    name = sorted(n for n in files if "chunk1" in n)[0]
    page = json.loads(files[name])
    changed, removed = page["results"][0], page["results"][1]
    changed_id, removed_id = changed["id"].rsplit("/", 1)[-1], removed["id"].rsplit("/", 1)[-1]
    changed["title"] = changed["title"] + " (corrected)"
    page["results"] = [r for r in page["results"] if r is not removed] + [{"id": None, "title": "bad"}]
    files[name] = json.dumps(page).encode()
    before = _snapshot_of_documents(s)

    for _ in range(2):  # the second run must not add a quarantine row or rewrite anything
        write_pull(RawPull("openalex", files, release=manifest.release), s.raw_root_path)
        assert materialize_selection(s, "openalex_documents").success

    after = _snapshot_of_documents(s)
    differing = {key for key in before if before[key] != after[key]}
    assert differing == {("openalex", changed_id), ("openalex", removed_id)}
    assert after[("openalex", removed_id)][2] == "gone"
    assert after[("openalex", changed_id)][0] != before[("openalex", changed_id)][0]
    assert _scalar(s, "SELECT count(*) FROM quarantine WHERE source = 'openalex' AND reason = 'work has no id'") == 1


@pytest.fixture(scope="module")
def resolution_on_snapshot(snapshot_loaded: FluxSettings) -> tuple[object, object]:
    from dagster_project.index.encoder import load_sentence_model
    from dagster_project.resolution.curation import load_curation
    from dagster_project.resolution.inputs import load_resolution_inputs
    from dagster_project.resolution.pathway_sets import active_pathway_ids

    path = snapshot_loaded.resolution_curation_path
    if not path.is_file():
        pytest.skip(f"no expert curation at {path}")
    engine = engine_for(snapshot_loaded.platform_database_url)
    model = load_sentence_model(snapshot_loaded.index.embedding_model)
    inputs = load_resolution_inputs(engine, lambda names: model.encode(names, normalize_embeddings=True))
    return inputs, load_curation(path).restricted_to(active_pathway_ids(engine))


def test_shipped_model_resolves_known_counterparts_and_stays_selective(resolution_on_snapshot: tuple) -> None:
    from dagster_project.resolution.model import load_resolution_model

    inputs, _ = resolution_on_snapshot
    classes = load_resolution_model().classify(inputs.features)
    relation = dict(
        zip(
            zip(inputs.features["reactome_id"], inputs.features["kegg_id"], strict=True),
            classes["relation"],
            strict=True,
        )
    )
    missed = [pair for pair in KNOWN_COUNTERPARTS if relation.get(pair, "unrelated") == "unrelated"]
    assert len(missed) <= 2, missed
    equivalent = classes["relation"] == "equivalent"
    # About one counterpart per KEGG pathway, not hundreds of near-duplicates across Reactome's levels.
    assert equivalent.sum() <= len(inputs.kegg.ids)
    assert classes.loc[equivalent, "confidence"].between(0, 1).all()


def test_cross_validated_resolution_holds_and_a_shuffled_method_fails_every_gate(resolution_on_snapshot: tuple) -> None:
    import numpy as np

    from dagster_project.evals.gate import GATED, compare
    from dagster_project.resolution.fit import cross_validate
    from dagster_project.resolution.model import FEATURES

    inputs, curation = resolution_on_snapshot
    cv = cross_validate(inputs.features, curation)
    m = cv.metrics
    assert m["equivalence_recall"] >= 0.7 and m["equivalence_precision_strict"] >= 0.3
    assert m["equivalence_precision_lenient"] >= 0.6 and m["part_of_direction_accuracy"] >= 0.8
    shuffled = inputs.features.copy()
    order = np.random.default_rng(7).permutation(len(shuffled))
    shuffled[list(FEATURES)] = shuffled[list(FEATURES)].to_numpy()[order]
    worse = cross_validate(shuffled, curation).metrics
    gate = compare(
        "resolution", {f"cv_{k}": v for k, v in worse.items()}, {f"cv_{k}": v for k, v in m.items()}, tolerance=0.02
    )
    assert {c.metric for c in gate if c.failed} == set(GATED["resolution"])
