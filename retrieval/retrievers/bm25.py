"""True BM25 (k1, b) over chunk text with bm25s. The index is built by the `chunk_bm25_index` asset into a
directory named by its version (a hash of the chunk ids, their content hashes and k1/b), so a rebuild never
overwrites the index that serving is reading, and an unchanged corpus is never rebuilt."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import bm25s
import numpy as np

from dagster_project.core.text import SHORT_STOPWORDS

IDS_FILE = "chunk_ids.json"
META_FILE = "flux_meta.json"
# The index is tokenized as bm25s (and scikit-learn) tokenize: Unicode words of two characters or more, with the short
# stop list (the same words as bm25s' "english"). Not core.text.words or the full STOPWORDS: either changes the tokens
# of the built indexes and which chunks a query ranks first. No stemming, for the same reason.
_TOKEN_PATTERN = r"(?u)\b\w\w+\b"
_STOPWORDS = sorted(SHORT_STOPWORDS)


def tokenize(texts: list[str]) -> list[list[str]]:
    """Lower-cased word tokens without English stopwords (the same function for the corpus and for queries)."""
    return bm25s.tokenize(
        texts, lower=True, token_pattern=_TOKEN_PATTERN, stopwords=_STOPWORDS, return_ids=False, show_progress=False
    )


def bm25_version(rows: Iterable[tuple[str, str]], k1: float, b: float) -> str:
    """Content version of an index over (chunk_id, content_hash) rows, sorted by chunk id by the caller."""
    digest = hashlib.sha256(f"bm25s:{bm25s.__version__}:k1={k1}:b={b}".encode())
    for chunk_id, content_hash in rows:
        digest.update(f"\n{chunk_id}:{content_hash}".encode())
    return digest.hexdigest()[:16]


def build_index(chunk_ids: list[str], texts: list[str], k1: float, b: float, directory: Path) -> int:
    """Build and save an index; written to a temporary sibling and renamed, so a reader never sees half of it."""
    if directory.exists():
        return len(json.loads((directory / IDS_FILE).read_text()))
    staging = directory.with_name(directory.name + ".tmp")
    staging.mkdir(parents=True, exist_ok=True)
    retriever = bm25s.BM25(k1=k1, b=b)
    retriever.index(tokenize(texts), show_progress=False)
    retriever.save(str(staging), show_progress=False)
    (staging / IDS_FILE).write_text(json.dumps(chunk_ids))
    (staging / META_FILE).write_text(json.dumps({"k1": k1, "b": b, "documents": len(chunk_ids)}))
    staging.rename(directory)
    return len(chunk_ids)


@dataclass
class BM25Index:
    directory: Path
    retriever: bm25s.BM25
    chunk_ids: list[str]

    @classmethod
    def load(cls, directory: Path) -> BM25Index:
        retriever = bm25s.BM25.load(str(directory), load_corpus=False, show_progress=False)
        return cls(directory, retriever, json.loads((directory / IDS_FILE).read_text()))

    def search(self, query: str, k: int, sources: list[str] | None = None) -> list[tuple[str, float]]:
        """(chunk_id, bm25 score) best first; only positive scores. `sources` filters by the chunk id prefix."""
        return self.search_many([query], k, sources)[0]

    def search_many(
        self, queries: list[str], k: int, sources: list[str] | None = None
    ) -> list[list[tuple[str, float]]]:
        """`search` for each query, scored in one bm25s call (each query's ranking is its own)."""
        tokens = tokenize(queries)
        found: list[list[tuple[str, float]]] = [[] for _ in queries]
        asked = [i for i, t in enumerate(tokens) if t]
        if not asked or not self.chunk_ids:
            return found
        wanted = k * 8 if sources else k  # over-fetch, then filter by source
        docs, scores = self.retriever.retrieve(
            [tokens[i] for i in asked], k=min(wanted, len(self.chunk_ids)), show_progress=False, n_threads=1
        )
        prefixes = tuple(f"{s}_" for s in sources or ())
        for row, i in enumerate(asked):
            hits = [
                (self.chunk_ids[int(d)], float(s))
                for d, s in zip(docs[row], scores[row], strict=True)
                if s > 0 and np.isfinite(s)
            ]
            if sources:
                hits = [h for h in hits if h[0].startswith(prefixes)]
            found[i] = hits[:k]
        return found


_loaded: dict[Path, BM25Index] = {}
_lock = threading.Lock()


def load_index(directory: Path) -> BM25Index:
    """One loaded copy per directory per process (an index directory never changes once written)."""
    with _lock:
        if directory not in _loaded:
            _loaded[directory] = BM25Index.load(directory)
        return _loaded[directory]
