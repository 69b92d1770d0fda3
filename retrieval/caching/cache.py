"""Query caches (docs/answers.md): embeddings 7 d, retrieval + rerank 1 h, answers 30 d.

Redis when it answers, an in-process LRU otherwise: a cache outage never fails a query. On a Redis error the cache
switches to memory, logs once, and retries Redis at most every `retry_interval` seconds, so a restarted Redis is
used again (the shared CircuitBreaker, dagster_project/core/breaker.py). A corrupt value is a miss. Requests with
user/session/source filters are never cached (`cacheable`).

Semantic answer hits need cosine >= threshold **and** identical distinctive tokens, because embeddings put
BRCA1/BRCA2 and type 1/type 2 diabetes next to each other. A lookup verifies only the entries an LSH index files
near the query (semantic_index.py), not every cached question.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from dagster_project.core.breaker import CircuitBreaker
from dagster_project.core.text import BROAD_STOPWORDS
from retrieval.caching import semantic_index
from retrieval.caching.memory_store import MemoryStore
from retrieval.caching.semantic_index import banding_for, decode_entry, encode_entry, unit_vector
from retrieval.model.polarity import polarity
from retrieval.model.types import Filters

if TYPE_CHECKING:
    from dagster_project.core.settings import FluxSettings

log = logging.getLogger(__name__)

Backend = Literal["redis", "memory", "disabled"]
HitKind = Literal["exact", "semantic"]
T = TypeVar("T")
_KINDS = ("exact", "semantic", "retrieval", "embedding")
_STORE_ERRORS = (redis.RedisError, OSError)

# What a question asks for, not what about: with the broad English stop list (core/text.py) never distinctive.
_REQUEST_WORDS = """
explain describe tell please mean means work works happen happens affect affects effect effects relate related
relationship difference differences compare compared example examples list name names overview summary summarize
briefly detail details exactly actually typically generally common commonly important involved involve involves play
plays function functions
"""
QUESTION_FILLER_WORDS: frozenset[str] = BROAD_STOPWORDS | frozenset(_REQUEST_WORDS.split())

# Not core/text.py's `words`: a token here runs over any word character (Greek and accented letters too) and keeps
# ids joined by "-", ":" or "." whole (GO:0006096, EC 2.7.1.1) without a sentence's last full stop. The tokens are
# stored with every cached answer, so another tokenizer would stop matching the answers already cached.
_TOKEN = re.compile(r"\w+(?:[-:.]\w+)*")
_SENTENCE_END = re.compile(r"[.?!]\s*$")


def normalize_query(q: str) -> str:
    """Case-folded, whitespace collapsed, stripped: what the exact keys hash."""
    return " ".join(q.casefold().split())


def query_key(q: str) -> str:
    return hashlib.sha256(normalize_query(q).encode("utf-8")).hexdigest()


def distinctive_tokens(q: str) -> frozenset[str]:
    """Case-folded tokens with a digit, capitalised in the original text, or not common words; and "not" when the
    sentence denies what it names (retrieval/model/polarity.py), so two sentences of opposite polarity never match.

    A common word capitalised only because it starts a sentence ("What is ...") is not distinctive, otherwise a
    case-only change would defeat the semantic cache; all-caps words (MET, CAT) and mid-sentence capitals are.
    """
    out: set[str] = set()
    for match in _TOKEN.finditer(q):
        token = match.group()
        folded = token.casefold()
        if any(c.isdigit() for c in token) or folded not in QUESTION_FILLER_WORDS:
            out.add(folded)
            continue
        if not any(c.isupper() for c in token) or token == "I":
            continue
        sentence_start = match.start() == 0 or bool(_SENTENCE_END.search(q[: match.start()]))
        if any(c.isupper() for c in token[1:]) or not sentence_start:
            out.add(folded)
    if polarity(q).negated:  # "X is not part of Y, right?" never reuses the answer to "X is part of Y, right?"
        out.add("not")
    return frozenset(out)


Store = MemoryStore | redis.Redis


class Cache:
    """Embedding, retrieval and answer caches over Redis with an in-process fallback. Never raises on cache trouble."""

    def __init__(
        self,
        redis_url: str | None,
        *,
        embedding_ttl: int,
        retrieval_ttl: int,
        answer_ttl: int,
        semantic_threshold: float,
        enabled: bool = True,
        namespace: str = "flux",
        retry_interval: float = 30.0,
        socket_timeout: float = 0.5,
        max_memory_entries: int = 10_000,
        max_semantic_entries: int = 2000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.redis_url = redis_url
        self.embedding_ttl = embedding_ttl
        self.retrieval_ttl = retrieval_ttl
        self.answer_ttl = answer_ttl
        self.semantic_threshold = semantic_threshold
        self.enabled = enabled
        self.namespace = namespace
        self.max_semantic_entries = max_semantic_entries
        self._clock = clock
        self._memory = MemoryStore(max_memory_entries, clock)
        self._redis: redis.Redis | None = None
        if enabled and redis_url:
            # One immediate retry (a pooled connection may predate a Redis restart), no backoff: a cache must fail
            # fast rather than stall the query it is meant to speed up.
            try:
                self._redis = redis.Redis.from_url(
                    redis_url,
                    socket_timeout=socket_timeout,
                    socket_connect_timeout=socket_timeout,
                    retry=Retry(NoBackoff(), 1),
                    decode_responses=True,
                    encoding_errors="replace",  # a corrupt value is a miss, not an exception
                )
            except ValueError as exc:  # a malformed URL is a cache outage too, not a failed start
                log.warning("invalid Redis URL (%s); using the in-process cache", exc)
        self._lock = threading.Lock()
        # Open while Redis is down: calls use memory until one ping per `retry_interval` finds it back.
        self._breaker = CircuitBreaker(retry_interval, clock)
        self._redis_checked = False  # closed but never pinged: the first call pings before trusting Redis
        self._hits = dict.fromkeys(_KINDS, 0)
        self._misses = dict.fromkeys(_KINDS, 0)
        self._fallback_switches = 0

    @classmethod
    def from_settings(cls, settings: FluxSettings) -> Cache:
        return cls(
            settings.resolved_redis_url,
            embedding_ttl=settings.cache.cache_embedding_ttl,
            retrieval_ttl=settings.cache.cache_retrieval_ttl,
            answer_ttl=settings.cache.cache_answer_ttl,
            semantic_threshold=settings.cache.semantic_cache_threshold,
            enabled=settings.cache.cache_enabled,
        )

    @property
    def retry_interval(self) -> float:
        return self._breaker.retry_after

    @property
    def backend(self) -> Backend:
        if not self.enabled:
            return "disabled"
        return "memory" if self._store() is self._memory else "redis"

    def _store(self) -> Store:
        if self._redis is None:
            return self._memory
        with self._lock:
            checked = self._redis_checked
        if checked and self._breaker.closed:
            return self._redis
        if not self._breaker.allow():  # down, and not yet time (or not this caller's turn) to ping again
            return self._memory
        try:
            self._redis.ping()
        except _STORE_ERRORS as exc:
            self._mark_down(exc)
            return self._memory
        except BaseException:
            self._breaker.release()  # not a verdict on Redis: let the next call ping
            raise
        with self._lock:
            self._redis_checked = True
        if self._breaker.record_success():
            log.info("Redis cache is reachable again; using it")
        return self._redis

    def _mark_down(self, exc: BaseException) -> None:
        # Only the failure that opens the breaker is a switch; failed re-pings and calls already in flight are not.
        switched = self._breaker.record_failure(f"{type(exc).__name__}: {exc}")
        if switched:
            with self._lock:
                self._fallback_switches += 1
            log.warning(
                "Redis cache unavailable (%s: %s); using the in-process cache, retrying every %.0fs",
                type(exc).__name__,
                exc,
                self.retry_interval,
            )

    def _run(self, op: Callable[[Store], T]) -> T:
        """Run `op` on the current store; on a Redis error switch to memory and run it there instead."""
        store = self._store()
        try:
            return op(store)
        except _STORE_ERRORS as exc:
            if store is self._memory:
                raise
            self._mark_down(exc)
            return op(self._memory)

    def _count(self, kind: str, hit: bool) -> None:
        with self._lock:
            (self._hits if hit else self._misses)[kind] += 1

    def cacheable(self, filters: Filters | None) -> bool:
        """Filtered (user/session/source) requests must never be cached: their results must not leak."""
        return self.enabled and not (filters is not None and filters.active())

    def stats(self) -> dict[str, Any]:
        with self._lock:
            hits, misses, switches = dict(self._hits), dict(self._misses), self._fallback_switches
        return {"backend": self.backend, "hits": hits, "misses": misses, "fallback_switches": switches}

    def embedding_key(self, model: str, query: str) -> str:
        return f"{self.namespace}:emb:{model}:{query_key(query)}"

    def retrieval_key(self, index_version: str, variant: str, query: str) -> str:
        return f"{self.namespace}:ret:{index_version}:{variant}:{query_key(query)}"

    def answer_key(self, index_version: str, variant: str, query: str) -> str:
        return self._answer_key(index_version, variant, query_key(query))

    def _answer_key(self, index_version: str, variant: str, digest: str) -> str:
        return f"{self.namespace}:ans:{index_version}:{variant}:{digest}"

    def semantic_index_key(self, index_version: str, variant: str) -> str:
        return f"{self.namespace}:sem:{index_version}:{variant}"

    def _get_json(self, key: str) -> Any:
        raw = self._run(lambda s: s.get(key))
        try:
            return None if raw is None else json.loads(raw)
        except ValueError:
            return None

    def _set_json(self, key: str, value: Any, ttl: int) -> None:
        try:
            payload = json.dumps(value)
        except (TypeError, ValueError) as exc:
            log.warning("not caching a value that is not JSON-serialisable: %s", exc)
            return
        self._run(lambda s: s.set(key, payload, ex=ttl))

    def get_embedding(self, model: str, query: str) -> list[float] | None:
        if not self.enabled:
            return None
        value = self._get_json(self.embedding_key(model, query))
        ok = isinstance(value, list) and all(isinstance(x, int | float) for x in value) and bool(value)
        self._count("embedding", ok)
        return [float(x) for x in value] if ok else None

    def set_embedding(self, model: str, query: str, vector: list[float]) -> None:
        if self.enabled:
            self._set_json(self.embedding_key(model, query), [float(x) for x in vector], self.embedding_ttl)

    def get_retrieval(self, index_version: str, variant: str, query: str) -> list[dict] | None:
        if not self.enabled:
            return None
        value = self._get_json(self.retrieval_key(index_version, variant, query))
        ok = isinstance(value, list) and all(isinstance(x, dict) for x in value)
        self._count("retrieval", ok)
        return value if ok else None

    def set_retrieval(self, index_version: str, variant: str, query: str, value: list[dict]) -> None:
        if self.enabled:
            self._set_json(self.retrieval_key(index_version, variant, query), value, self.retrieval_ttl)

    def get_answer(
        self, index_version: str, variant: str, query: str, query_vector: list[float] | None
    ) -> tuple[dict, HitKind] | None:
        """Exact hit by key first; else the closest stored answer with cosine >= threshold and equal tokens."""
        if not self.enabled:
            return None
        value = self._get_json(self.answer_key(index_version, variant, query))
        if isinstance(value, dict):
            self._count("exact", True)
            return value, "exact"
        self._count("exact", False)
        if query_vector is None:
            return None
        found = self._semantic_lookup(index_version, variant, query, query_vector)
        self._count("semantic", found is not None)
        return (found, "semantic") if found is not None else None

    def _semantic_lookup(self, index_version: str, variant: str, query: str, vector: list[float]) -> dict | None:
        q = unit_vector(vector)
        if q is None:
            return None
        tokens = sorted(distinctive_tokens(query))
        index_key = self.semantic_index_key(index_version, variant)
        banding = banding_for(self.semantic_threshold)
        # Only the entries sharing an LSH bucket with the query are read; each is then verified exactly as a full
        # scan would: same shape, equal distinctive tokens, cosine >= threshold.
        found = self._run(lambda s: semantic_index.candidates(s, index_key, q, banding))
        candidates: list[tuple[float, str]] = []
        vectors: dict[str, np.ndarray] = {}
        for field, raw in found:
            stored, stored_tokens, _ = decode_entry(raw)
            if stored is None or stored_tokens != tokens or stored.shape != q.shape:
                continue
            score = float(stored @ q)
            if score >= self.semantic_threshold:
                candidates.append((score, field))
                vectors[field] = stored
        for _, field in sorted(candidates, reverse=True):
            value = self._get_json(self._answer_key(index_version, variant, field))
            if isinstance(value, dict):
                return value
            # The answer expired or is corrupt while its index entry lived on: forget the entry and its buckets.
            self._run(lambda s, f=field: semantic_index.forget(s, index_key, f, vectors[f], banding))
        return None

    def set_answer(
        self, index_version: str, variant: str, query: str, query_vector: list[float] | None, value: dict
    ) -> None:
        if not self.enabled:
            return
        self._set_json(self.answer_key(index_version, variant, query), value, self.answer_ttl)
        unit = unit_vector(query_vector) if query_vector is not None else None
        if unit is None:
            return
        entry = encode_entry(unit, sorted(distinctive_tokens(query)))
        index_key = self.semantic_index_key(index_version, variant)
        self._run(lambda s: self._index_add(s, index_key, query_key(query), entry, unit))

    def _index_add(self, store: Store, index_key: str, field: str, entry: str, unit: np.ndarray) -> None:
        """Add an entry and file it in its LSH buckets, refresh the TTLs, and keep only the newest
        `max_semantic_entries` (the bound is on memory now: lookups read only their candidates)."""
        banding = banding_for(self.semantic_threshold)
        semantic_index.add(store, index_key, field, entry, unit, banding, self.answer_ttl, self.max_semantic_entries)
