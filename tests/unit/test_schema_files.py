from pathlib import Path

import pytest

from dagster_project.core.settings import FluxSettings
from dagster_project.storage.migrate import MigrationError, load_migrations, split_statements


def test_shipped_migrations_are_ordered_and_render_their_placeholders() -> None:
    pg = load_migrations("postgres")
    assert [m.version for m in pg] == list(range(1, len(pg) + 1))
    s = FluxSettings(embedding_dim=768, hnsw_m=24, hnsw_ef_construction=200)
    rendered = "\n".join(m.render(s) for m in pg)
    assert "vector(768)" in rendered
    assert "m = 24" in rendered and "ef_construction = 200" in rendered
    assert "'{}'::jsonb" in rendered, "literal braces must survive rendering"
    assert "{embedding_dim}" not in rendered


def test_neo4j_migrations_split_into_single_statements() -> None:
    settings = FluxSettings(embedding_dim=768)
    statements = [s for m in load_migrations("neo4j") for s in split_statements(m.render(settings))]
    assert all(stmt.upper().startswith(("CREATE CONSTRAINT", "CREATE VECTOR INDEX")) for stmt in statements)
    assert any("`vector.dimensions`: 768" in stmt for stmt in statements)
    assert all(";" not in stmt and "//" not in stmt for stmt in statements)
    labels = " ".join(statements)
    for label in ("Pathway", "Reaction", "Gene", "Compound", "Species", "Compartment"):
        assert f"(n:{label})" in labels


def _write(root: Path, *names: str) -> Path:
    (root / "postgres").mkdir(parents=True)
    for name in names:
        (root / "postgres" / name).write_text("SELECT 1;")
    return root


def test_gaps_and_bad_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(MigrationError, match="without gaps"):
        load_migrations("postgres", _write(tmp_path / "a", "0001_a.sql", "0003_c.sql"))
    with pytest.raises(MigrationError, match="NNNN_name"):
        load_migrations("postgres", _write(tmp_path / "b", "0001_a.sql", "2_b.sql"))
    assert [m.name for m in load_migrations("postgres", _write(tmp_path / "c", "0002_b.sql", "0001_a.sql"))] == [
        "a",
        "b",
    ]
