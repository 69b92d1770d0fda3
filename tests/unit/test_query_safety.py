"""No SQL or Cypher is built from user text: every statement string that is assembled in code (an f-string, `+`,
`%` or `.format`) may only splice in module constants, `int(...)`, or one of the reviewed names listed here with
where they come from. User values always travel as bound parameters (`:name` / `$name`)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("retrieval", "serving", "dagster_project")
STATEMENT_CALLS = {"text", "execute_query", "exec_driver_sql", "run", "execute"}
CONSTANT = re.compile(r"^_?[A-Z][A-Z0-9_]*$")
# (file, spliced expression): each checked by hand; none can hold request or source-record text.
REVIEWED = {
    ("dagster_project/ops/summary.py", "table"),  # iterates the fixed SUMMARY_TABLES list
    ("dagster_project/storage/bulk.py", "table"),  # code constants (docstring of copy_into_temp)
    ("dagster_project/storage/bulk.py", "ddl"),  # built from the same constant column list
    ("dagster_project/index/chunk_store.py", "dim"),  # int(vectors.shape[1])
    ("dagster_project/evals/store.py", "where"),  # one of two constant fragments
    ("retrieval/retrievers/pg_retriever.py", "source"),  # a quoted flux_index.chunks_<hex16> name
    ("dagster_project/evals/baseline_vectors.py", "table.name"),  # a field of the _DOCUMENTS / _QUERIES constants
    ("dagster_project/evals/baseline_vectors.py", "table.key"),  # a field of the same two constants
    ("retrieval/pubmed/indexed.py", "where"),  # constant clauses; the question's words are bound as :w0, :w1, …
}


def _spliced(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.JoinedStr):
        return [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return [
            part
            for side in (node.left, node.right)
            for part in (
                _spliced(side)
                if isinstance(side, ast.JoinedStr | ast.BinOp)
                else []
                if isinstance(side, ast.Constant)
                else [side]
            )
        ]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return list(node.args) + [k.value for k in node.keywords]
    return []


def _allowed(path: str, expr: ast.expr) -> bool:
    if isinstance(expr, ast.Name) and CONSTANT.match(expr.id):
        return True
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "int":
        return True
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "Identifier":
        return True  # psycopg's sql.Identifier quotes names
    return (path, ast.unparse(expr)) in REVIEWED


def assembled_statements() -> list[tuple[str, int, str]]:
    found = []
    for package in PACKAGES:
        for file in sorted((ROOT / package).rglob("*.py")):
            path = file.relative_to(ROOT).as_posix()
            for node in ast.walk(ast.parse(file.read_text())):
                if not (isinstance(node, ast.Call) and node.args):
                    continue
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in STATEMENT_CALLS:
                    found += [
                        (path, node.lineno, ast.unparse(e)) for e in _spliced(node.args[0]) if not _allowed(path, e)
                    ]
    return found


def test_no_statement_splices_in_anything_but_constants_or_reviewed_names() -> None:
    assert assembled_statements() == []


@pytest.mark.parametrize(
    "source",
    [
        "conn.execute(text(f\"SELECT * FROM documents WHERE title = '{question}'\"))",
        'driver.execute_query("MATCH (p {name: \'" + name + "\'}) RETURN p")',
        'conn.execute(text("SELECT * FROM t WHERE id = {}".format(user_id)))',
    ],
)
def test_the_scan_catches_statements_built_from_variables(source: str) -> None:
    call = ast.parse(source).body[0].value  # type: ignore[attr-defined]
    statement = (
        call.args[0] if call.func.attr != "execute" or not isinstance(call.args[0], ast.Call) else call.args[0].args[0]
    )
    assert any(not _allowed("retrieval/x.py", e) for e in _spliced(statement))


@pytest.mark.parametrize(
    "name",
    [
        'chunks_0123456789abcdef"; DROP TABLE documents; --',
        "documents",
        "chunks_0123456789ABCDEF",
        "chunks_0123456789abcdef_building",
    ],
)
def test_only_versioned_chunk_table_names_reach_a_statement(name: str) -> None:
    from dagster_project.index.tables import IndexTableError, qualified

    with pytest.raises(IndexTableError):
        qualified(name)
    assert qualified("chunks_0123456789abcdef").as_string(None) == '"flux_index"."chunks_0123456789abcdef"'
