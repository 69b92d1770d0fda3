"""Cache keys, distinctive tokens and the in-process backend (no Redis: `Cache(None, ...)`)."""

from __future__ import annotations

import hashlib
import math
import socket

import pytest

from retrieval.caching.cache import Cache, distinctive_tokens, normalize_query, query_key
from retrieval.model.types import Filters

DIM = 8


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def vec(cosine: float = 1.0) -> list[float]:
    """A vector whose cosine with `vec()` is exactly `cosine`."""
    return [cosine, math.sqrt(max(0.0, 1.0 - cosine**2))] + [0.0] * (DIM - 2)


def make_cache(clock: FakeClock | None = None, **overrides: object) -> Cache:
    options: dict = {
        "embedding_ttl": 7 * 24 * 3600,
        "retrieval_ttl": 3600,
        "answer_ttl": 30 * 24 * 3600,
        "semantic_threshold": 0.95,
    }
    if clock is not None:
        options["clock"] = clock
    options.update(overrides)
    return Cache(None, **options)


# --- keys and tokens --------------------------------------------------------------------------------------
def test_normalize_query_casefolds_and_collapses_whitespace() -> None:
    assert normalize_query("  What   is\tGLYCOLYSIS?\n") == "what is glycolysis?"


def test_query_key_is_sha256_of_the_normalized_query() -> None:
    key = query_key("What is  Glycolysis?")
    assert key == hashlib.sha256(b"what is glycolysis?").hexdigest()
    assert key == query_key("what is glycolysis?  ")
    assert key != query_key("what is gluconeogenesis?")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("What does BRCA1 do?", "What does BRCA2 do?"),
        ("What causes type 1 diabetes?", "What causes type 2 diabetes?"),
        ("Which genes drive ALL relapse?", "Which genes drive all relapse?"),  # all-caps: a disease, not "all"
        ("What is R-HSA-70171?", "What is R-HSA-70263?"),
        # opposite polarity: "not" is a filler word, but a sentence that denies is another question
        ("True or false: GCK is associated with diabetes", "True or false: GCK is not associated with diabetes"),
        ("Glycolysis is part of Metabolism, right?", "Glycolysis is not part of Metabolism, right?"),
    ],
)
def test_distinctive_tokens_separate_near_identical_questions(a: str, b: str) -> None:
    assert distinctive_tokens(a) != distinctive_tokens(b)


def test_distinctive_tokens_ignore_case_only_and_punctuation_changes() -> None:
    assert distinctive_tokens("what is glycolysis") == distinctive_tokens("What is glycolysis?")
    assert distinctive_tokens("What does BRCA1 do?") == frozenset({"brca1"})
    assert "type" in distinctive_tokens("type 1 diabetes") and "1" in distinctive_tokens("type 1 diabetes")
    assert "r-hsa-70171" in distinctive_tokens("Explain R-HSA-70171.")


def test_keys_include_model_index_version_and_variant() -> None:
    cache = make_cache()
    assert cache.embedding_key("m1", "q") != cache.embedding_key("m2", "q")
    assert cache.retrieval_key("v1", "rrf:5", "q") != cache.retrieval_key("v2", "rrf:5", "q")
    assert cache.retrieval_key("v1", "rrf:5", "q") != cache.retrieval_key("v1", "ce:5", "q")
    assert cache.answer_key("v1", "x", "Q  ") == cache.answer_key("v1", "x", "q")


# --- memory backend ---------------------------------------------------------------------------------------
def test_memory_backend_round_trips_and_expires() -> None:
    clock = FakeClock()
    cache = make_cache(clock, embedding_ttl=10, retrieval_ttl=5)
    assert cache.backend == "memory"
    cache.set_embedding("m", "What is glycolysis?", [0.5, 0.25])
    cache.set_retrieval("v1", "rrf", "what is glycolysis?", [{"id": "c1", "score": 1.0}])
    assert cache.get_embedding("m", "what is  glycolysis?") == [0.5, 0.25]
    assert cache.get_retrieval("v1", "rrf", "What is glycolysis?") == [{"id": "c1", "score": 1.0}]
    clock.now += 6
    assert cache.get_retrieval("v1", "rrf", "What is glycolysis?") is None
    assert cache.get_embedding("m", "What is glycolysis?") == [0.5, 0.25]
    clock.now += 5
    assert cache.get_embedding("m", "What is glycolysis?") is None


def test_memory_backend_is_a_bounded_lru() -> None:
    cache = make_cache(max_memory_entries=2)
    cache.set_embedding("m", "a", [1.0])
    cache.set_embedding("m", "b", [2.0])
    assert cache.get_embedding("m", "a") == [1.0]  # "a" is now the most recently used
    cache.set_embedding("m", "c", [3.0])
    assert cache.get_embedding("m", "b") is None
    assert cache.get_embedding("m", "a") == [1.0]
    assert cache.get_embedding("m", "c") == [3.0]


def test_retrieval_misses_for_another_index_version() -> None:
    cache = make_cache()
    cache.set_retrieval("v1", "rrf:5", "q", [{"id": "c1"}])
    assert cache.get_retrieval("v1", "rrf:5", "q") == [{"id": "c1"}]
    assert cache.get_retrieval("v2", "rrf:5", "q") is None
    assert cache.get_retrieval("v1", "ce:5", "q") is None


def test_corrupt_values_are_misses() -> None:
    cache = make_cache()
    cache._memory.set(cache.embedding_key("m", "q"), "{not json", ex=60)
    cache._memory.set(cache.retrieval_key("v1", "x", "q"), '{"a": 1}', ex=60)  # JSON, but not a list
    cache._memory.set(cache.answer_key("v1", "x", "q"), "[1, 2]", ex=60)
    assert cache.get_embedding("m", "q") is None
    assert cache.get_retrieval("v1", "x", "q") is None
    assert cache.get_answer("v1", "x", "q", None) is None


# --- answers ----------------------------------------------------------------------------------------------
def test_exact_answer_hit_by_normalized_query() -> None:
    cache = make_cache()
    cache.set_answer("v1", "quick", "What is glycolysis?", vec(), {"answer": "A pathway."})
    assert cache.get_answer("v1", "quick", "  what IS glycolysis? ", None) == ({"answer": "A pathway."}, "exact")
    assert cache.get_answer("v2", "quick", "What is glycolysis?", vec()) is None
    assert cache.get_answer("v1", "thinking", "What is glycolysis?", vec()) is None


def test_semantic_hit_needs_cosine_at_threshold_and_equal_tokens() -> None:
    cache = make_cache()
    cache.set_answer("v1", "quick", "What does BRCA1 do?", vec(), {"answer": "DNA repair."})
    # Same distinctive tokens ({brca1}), close enough: a semantic hit.
    assert cache.get_answer("v1", "quick", "What does BRCA1 do", vec(0.97)) == ({"answer": "DNA repair."}, "semantic")
    # Same tokens but below the threshold: miss.
    assert cache.get_answer("v1", "quick", "What does BRCA1 do", vec(0.90)) is None
    # Identical vector but another gene: never the BRCA1 answer.
    assert cache.get_answer("v1", "quick", "What does BRCA2 do?", vec()) is None
    # No vector: only exact hits are possible.
    assert cache.get_answer("v1", "quick", "What does BRCA1 do", None) is None
    # Identical vector, the same words but for a negation: never the answer of the opposite statement.
    cache.set_answer("v1", "quick", "Glycolysis is part of Metabolism, right?", vec(), {"answer": "Yes: …"})
    assert cache.get_answer("v1", "quick", "Glycolysis is not part of Metabolism, right?", vec()) is None
    assert cache.get_answer("v1", "quick", "glycolysis is part of metabolism right", vec(0.97)) is not None


def test_semantic_hit_picks_the_closest_answer() -> None:
    cache = make_cache()
    cache.set_answer("v1", "q", "Is glycolysis aerobic?", vec(0.96), {"answer": "far"})
    cache.set_answer("v1", "q", "Is glycolysis aerobic ?!", vec(0.99), {"answer": "near"})
    assert cache.get_answer("v1", "q", "is glycolysis aerobic", vec()) == ({"answer": "near"}, "semantic")


def test_semantic_index_is_bounded_and_drops_the_oldest() -> None:
    cache = make_cache(max_semantic_entries=3)
    for i in range(5):
        cache.set_answer("v1", "q", f"question number {i}", vec(), {"answer": str(i)})
    entries = cache._memory.hgetall(cache.semantic_index_key("v1", "q"))
    assert len(entries) == 3
    assert query_key("question number 4") in entries
    assert query_key("question number 0") not in entries


def test_semantic_entry_without_its_answer_is_a_miss() -> None:
    clock = FakeClock()
    cache = make_cache(clock)
    cache.set_answer("v1", "q", "What does TP53 do?", vec(), {"answer": "x"})
    cache._memory._data.pop(cache.answer_key("v1", "q", "What does TP53 do?"))
    assert cache.get_answer("v1", "q", "what does TP53 do", vec()) is None
    assert cache._memory.hgetall(cache.semantic_index_key("v1", "q")) == {}


# --- switches, stats, fallback ----------------------------------------------------------------------------
def test_disabled_cache_stores_nothing() -> None:
    cache = make_cache(enabled=False)
    assert cache.backend == "disabled"
    cache.set_answer("v1", "q", "What is glycolysis?", vec(), {"answer": "x"})
    cache.set_embedding("m", "q", [1.0])
    assert cache.get_answer("v1", "q", "What is glycolysis?", vec()) is None
    assert cache.get_embedding("m", "q") is None
    assert not cache.cacheable(None)


def test_cacheable_only_without_filters() -> None:
    cache = make_cache()
    assert cache.cacheable(None)
    assert cache.cacheable(Filters())
    assert not cache.cacheable(Filters(user="alice"))
    assert not cache.cacheable(Filters(session="s1"))
    assert not cache.cacheable(Filters(sources=["pubmed"]))


def test_stats_count_hits_and_misses_per_kind() -> None:
    cache = make_cache()
    cache.set_answer("v1", "q", "What does BRCA1 do?", vec(), {"answer": "x"})
    cache.get_answer("v1", "q", "What does BRCA1 do?", vec())  # exact hit
    cache.get_answer("v1", "q", "what does BRCA1 do", vec())  # exact miss, semantic hit
    cache.get_answer("v1", "q", "What does BRCA2 do?", vec())  # exact miss, semantic miss
    cache.get_embedding("m", "nothing")
    stats = cache.stats()
    assert stats["backend"] == "memory"
    assert stats["hits"] == {"exact": 1, "semantic": 1, "retrieval": 0, "embedding": 0}
    assert stats["misses"] == {"exact": 2, "semantic": 1, "retrieval": 0, "embedding": 1}
    assert stats["fallback_switches"] == 0


def test_unreachable_redis_falls_back_to_memory_without_raising() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    clock = FakeClock()
    cache = Cache(
        f"redis://127.0.0.1:{port}/0",
        embedding_ttl=60,
        retrieval_ttl=60,
        answer_ttl=60,
        semantic_threshold=0.95,
        clock=clock,
    )
    cache.set_answer("v1", "q", "What does BRCA1 do?", vec(), {"answer": "x"})
    assert cache.get_answer("v1", "q", "What does BRCA1 do?", vec()) == ({"answer": "x"}, "exact")
    assert cache.backend == "memory"
    assert cache.stats()["fallback_switches"] == 1
    clock.now += 31  # the retry fails too: still one switch, still memory
    assert cache.backend == "memory"
    assert cache.stats()["fallback_switches"] == 1
