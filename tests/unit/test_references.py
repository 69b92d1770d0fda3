"""Every repository path, module and class member that the prose names exists.

The prose is the docs (README.md, BENCHMARKS.md, docs/**/*.md), the docstrings, string statements and comments of
the Python code, and the comments of pyproject.toml and the Makefile. Three kinds of reference are checked:

- paths: a token under a top-level folder of the repository (`dagster_project/...`, `docs/...`) or ending in a
  known extension (`answerer.py`, `grounding_rule.json`). It exists at the root, or is the tail of a repository
  path (a path relative to its package, or a bare file name). Runtime state (`.flux/`, `FLUX_HOME`, dbt's
  `target/`, any other dot-folder), URLs, absolute paths, placeholders (`<source>`, `*`) and the few files that
  live outside the repository (OUTSIDE) are not checked.
- modules: a dotted name under `dagster_project.`, `retrieval.` or `serving.` is a module, or a module and a name
  it defines (and, when that name is a class, a member of it).
- members: `Class.member`, where `Class` is a class defined in the repository, names a member of it or of a base.

The code is read as text (a small lexer, then `ast` for the modules and classes named), never imported: no services,
no import side effects, about a second.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("dagster_project", "retrieval", "serving")
CODE_FOLDERS = (*PACKAGES, "tests", "benchmarks")
TOP_FOLDERS = frozenset({*CODE_FOLDERS, "docs", "dbt", "deploy", ".ci"})
EXTENSIONS = frozenset(
    {"py", "md", "sql", "yml", "yaml", "json", "toml", "cypher", "js", "css", "html", "svg", "png", "sh", "lock", "txt"}
)
# Besides the dot-folders (version control, the venv, caches, `.flux`), what is not the repository: what running
# Flux, dbt or a build writes.
NOT_REPOSITORY = frozenset({"__pycache__", "flux.egg-info", "target", "logs", "dbt_packages"})
RUNTIME_PARTS = frozenset({"FLUX_HOME", "DAGSTER_HOME", "target", "logs", "dbt_packages"})
# Files the prose names that are, by design, not in the repository.
OUTSIDE = {
    "manifest.json": "written by `flux backup` into a backup, and by dbt into target/",
    "tuning.json": "an artifact of each scorecard run in MLflow (evals/report.py)",
    "esearch.json": "a PubMed pull's file in the raw zone",
    "ori_pqal.json": "PubMedQA's file in ../shared/data",
    "keggapi.html": "KEGG's REST documentation page",
    "dagster_project/dbt_project": "dbt/ as `make wheel` packages it",
}
PLACEHOLDER = re.compile(r"[<>*{}$~\[\]]")
# A path-like token: what a path may hold, plus the characters of placeholders and URLs so they stay one token.
TOKEN = re.compile(r"[\w./<>*{}$~\[\]:-]+")
MODULE = re.compile(r"(?<![\w.])(?:dagster_project|retrieval|serving)(?:\.\w+)+")
MEMBER = re.compile(r"(?<![\w.])([A-Z]\w*)\.(\w+)")
# Just enough of Python's lexer to tell comments and docstrings from code: strings, comments and brackets.
TRIPLE_QUOTED = r"""(?:"{3}(?:\\[\s\S]|[^\\])*?"{3}|'{3}(?:\\[\s\S]|[^\\])*?'{3})"""
QUOTED = r"""(?:"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')"""
STRING = rf"[rRbBuUfF]{{0,2}}(?:{TRIPLE_QUOTED}|{QUOTED})"
LEXER = re.compile(rf"(?P<string>{STRING})|(?P<comment>#[^\n]*)|(?P<open>[(\[{{])|(?P<close>[)\]}}])")
CLASS = re.compile(r"^[ \t]*class (\w+)\b", re.MULTILINE)


@dataclass(frozen=True)
class Line:
    path: Path
    number: int
    text: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.number}"


# The prose: docs, docstrings, comments.


def python_files() -> list[Path]:
    return sorted(p for folder in CODE_FOLDERS for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)


def markdown_lines() -> Iterator[Line]:
    for path in [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for number, text in enumerate(path.read_text().splitlines(), 1):
            yield Line(path, number, text)


def python_lines(path: Path) -> Iterator[Line]:
    """Comments, and strings that are a statement of their own (docstrings)."""
    text, depth, line, position = source(path), 0, 1, 0
    for match in LEXER.finditer(text):
        line, position = line + text.count("\n", position, match.start()), match.start()
        if match.lastgroup == "open":
            depth += 1
        elif match.lastgroup == "close":
            depth -= 1
        elif match.lastgroup == "comment":
            yield Line(path, line, match.group())
        elif depth == 0:
            before = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
            end_of_line = text.find("\n", match.end())
            after = text[match.end() : end_of_line if end_of_line >= 0 else len(text)].strip()
            if not before.strip() and (not after or after.startswith("#")):
                for offset, string_line in enumerate(match.group().splitlines()):
                    yield Line(path, line + offset, string_line)


def config_comment_lines() -> Iterator[Line]:
    for path in (ROOT / "pyproject.toml", ROOT / "Makefile"):
        for number, text in enumerate(path.read_text().splitlines(), 1):
            code = re.sub(r'"[^"]*"', '""', text)  # a '#' inside a TOML string starts no comment
            if "#" in code and (path.name == "pyproject.toml" or code.lstrip().startswith("#")):
                yield Line(path, number, code[code.index("#") :])


def prose() -> Iterator[Line]:
    yield from markdown_lines()
    for path in python_files():
        yield from python_lines(path)
    yield from config_comment_lines()


# What the repository holds.


@cache
def source(path: Path) -> str:
    return path.read_text()


@cache
def syntax_tree(path: Path) -> ast.Module:
    return ast.parse(source(path))


@cache
def repository_paths() -> frozenset[str]:
    """Every file and folder of the repository, relative to the root."""
    paths: set[str] = set()
    folders = [ROOT]
    while folders:
        for child in folders.pop().iterdir():
            if child.name in NOT_REPOSITORY or (child.name.startswith(".") and child.name not in TOP_FOLDERS):
                continue
            paths.add(child.relative_to(ROOT).as_posix())
            if child.is_dir():
                folders.append(child)
    return frozenset(paths)


@cache
def path_tails() -> frozenset[str]:
    """Every trailing part of every repository path: `kinds/registry.py`, `registry.py`, ..."""
    return frozenset(
        "/".join(parts[i:]) for path in repository_paths() for parts in [path.split("/")] for i in range(len(parts))
    )


@cache
def graph_labels() -> frozenset[str]:
    """The Neo4j labels: `Gene.id` in the prose is a graph property, not a Python attribute."""
    cypher = "".join(p.read_text() for p in (ROOT / "dagster_project/storage/migrations/neo4j").glob("*.cypher"))
    return frozenset(re.findall(r"\(\w*:(\w+)\)", cypher))


@cache
def class_files() -> dict[str, list[Path]]:
    """Each class name defined in the code, and the files that define a class of that name."""
    files: dict[str, list[Path]] = defaultdict(list)
    for path in python_files():
        for name in CLASS.findall(source(path)):
            files[name].append(path)
    return files


def defined_names(body: list[ast.stmt]) -> set[str]:
    """Names a module or class body binds: functions, classes, assignments, imports, also inside if/try/with."""
    names: set[str] = set()
    for node in body:
        match node:
            case ast.FunctionDef(name=name) | ast.AsyncFunctionDef(name=name) | ast.ClassDef(name=name):
                names.add(name)
            case ast.Assign(targets=targets):
                names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            case ast.AnnAssign(target=ast.Name(id=name)) | ast.AugAssign(target=ast.Name(id=name)):
                names.add(name)
            case ast.Import(names=aliases) | ast.ImportFrom(names=aliases):
                names.update((a.asname or a.name).split(".")[0] for a in aliases)
            case ast.If() | ast.Try() | ast.With():
                for block in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                    names |= defined_names(block)
                for handler in getattr(node, "handlers", []):
                    names |= defined_names(handler.body)
    return names


@cache
def class_definitions(name: str) -> list[tuple[frozenset[str], tuple[str, ...]]]:
    """Each class of this name: its members (`self.x = ...` included) and its bases' names."""
    found = []
    for path in class_files().get(name, []):
        for node in ast.walk(syntax_tree(path)):
            if isinstance(node, ast.ClassDef) and node.name == name:
                members = defined_names(node.body) | {
                    n.attr
                    for n in ast.walk(node)
                    if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                    if isinstance(n.value, ast.Name) and n.value.id in {"self", "cls"}
                }
                bases = tuple(ast.unparse(b).split("[")[0].split(".")[-1] for b in node.bases)
                found.append((frozenset(members), bases))
    return found


def has_member(class_name: str, member: str, seen: frozenset[str] = frozenset()) -> bool:
    """True when a class of that name or one of its bases has the member, or a base is a library's class."""
    for members, bases in class_definitions(class_name):
        if member in members:
            return True
        for base in bases:
            if base in seen or base in {"object", "Protocol", "ABC", "Generic"}:
                continue
            if base not in class_files():
                return True  # inherited from a library class: not ours to check
            if has_member(base, member, seen | {class_name}):
                return True
    return False


# The checks.


def path_problem(token: str) -> str | None:
    token = token.split("::")[0].split("#")[0].rstrip(".,:;-").removeprefix("./").rstrip("/")
    if not token or "://" in token or PLACEHOLDER.search(token) or token.startswith(("/", "-")):
        return None
    parts = token.split("/")
    if RUNTIME_PARTS.intersection(parts) or any(part in {"", ".."} for part in parts) or token in OUTSIDE:
        return None
    if parts[0].startswith(".") and parts[0] not in TOP_FOLDERS:
        return None  # `.flux/`, `.venv/`, a dot-file a tool writes
    extension = parts[-1].rpartition(".")[2] if "." in parts[-1] else ""
    if extension not in EXTENSIONS and not (len(parts) > 1 and parts[0] in TOP_FOLDERS):
        return None
    if {token, f"{token}.py"} & repository_paths() or (parts[0] not in TOP_FOLDERS and token in path_tails()):
        return None
    return f"no such path: {token}"


def module_problem(dotted: str) -> str | None:
    parts = dotted.split(".")
    if parts[-1] in EXTENSIONS:
        return None  # a file name: the path check reads it
    for end in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:end])
        module = next((f for f in (base.with_suffix(".py"), base / "__init__.py") if f.is_file()), None)
        if module is not None:
            break
    else:
        return f"no such module: {dotted}"
    names = parts[end:]
    if not names:
        return None
    tree = syntax_tree(module)
    defined = defined_names(tree.body)
    if names[0] not in defined and "__getattr__" not in defined:
        return f"module {'.'.join(parts[:end])} defines no {names[0]}: {dotted}"
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    if len(names) > 1 and names[0] in classes and not has_member(names[0], names[1]):
        return f"class {names[0]} has no member {names[1]}: {dotted}"
    return None


def member_problem(class_name: str, member: str) -> str | None:
    if class_name not in class_files() or class_name in graph_labels() or member in EXTENSIONS:
        return None
    if has_member(class_name, member):
        return None
    return f"class {class_name} has no member {member}: {class_name}.{member}"


def problems(line: Line) -> Iterator[str]:
    for match in TOKEN.finditer(line.text):
        if problem := path_problem(match.group()):
            yield problem
    for match in MODULE.finditer(line.text):
        if problem := module_problem(match.group()):
            yield problem
    for match in MEMBER.finditer(line.text):
        if problem := member_problem(match.group(1), match.group(2)):
            yield problem


def test_every_path_module_and_member_named_in_the_prose_exists() -> None:
    stale = sorted({f"{line} → {problem}" for line in prose() for problem in problems(line)})
    assert not stale, f"{len(stale)} stale reference(s):\n" + "\n".join(stale)


def test_asset_stages_are_numbered_once_each_in_order() -> None:
    stages: dict[int, list[str]] = defaultdict(list)
    for path in sorted((ROOT / "dagster_project/defs/assets").glob("*.py")):
        if match := re.match(r'\s*"""Stage (\d+)\b', source(path)):
            stages[int(match.group(1))].append(path.name)
    twice = {stage: names for stage, names in stages.items() if len(names) > 1}
    assert not twice, f"one stage number, several assets: {twice}"
    assert sorted(stages) == list(range(1, len(stages) + 1)), f"stages are not 1..n: {dict(sorted(stages.items()))}"
