"""The caches against a real redis-server this module starts itself (own port, own FLUX_HOME under tmp_path),
including an outage in the middle of a test and the return to Redis after a restart."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
import redis

from dagster_project.stack.redis import RedisService
from retrieval.caching.cache import Cache
from retrieval.caching.memory_store import MemoryStore
from tests.support.clock import ManualClock

DAY = 24 * 3600
RETRY = 0.3  # seconds between attempts to get back to Redis after an outage (30 s in production)


def vec(first: float = 1.0) -> list[float]:
    return [first, 1.0 - first, 0.0, 0.0]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def cache(redis_service: RedisService, clock: ManualClock) -> Cache:
    return Cache(
        redis_service.url,
        embedding_ttl=7 * DAY,
        retrieval_ttl=3600,
        answer_ttl=30 * DAY,
        semantic_threshold=0.95,
        namespace=f"flux-test-{uuid.uuid4().hex[:8]}",
        retry_interval=RETRY,
        clock=clock,
    )


@pytest.fixture
def client(redis_service: RedisService) -> redis.Redis:
    return redis.Redis.from_url(redis_service.url, decode_responses=True)


def test_values_live_in_redis_with_their_ttls(cache: Cache, client: redis.Redis) -> None:
    assert cache.backend == "redis"
    cache.set_answer("v1", "quick", "What does BRCA1 do?", vec(), {"answer": "DNA repair."})
    cache.set_embedding("all-MiniLM-L6-v2", "What does BRCA1 do?", [0.1, 0.2])
    cache.set_retrieval("v1", "rrf:5", "What does BRCA1 do?", [{"id": "pubmed_1_0"}])

    assert cache.get_answer("v1", "quick", "what does brca1 do?", None) == ({"answer": "DNA repair."}, "exact")
    assert cache.get_embedding("all-MiniLM-L6-v2", "What does BRCA1 do?") == pytest.approx([0.1, 0.2])
    assert cache.get_retrieval("v1", "rrf:5", "What does BRCA1 do?") == [{"id": "pubmed_1_0"}]

    expected = {
        cache.answer_key("v1", "quick", "What does BRCA1 do?"): 30 * DAY,
        cache.semantic_index_key("v1", "quick"): 30 * DAY,
        cache.embedding_key("all-MiniLM-L6-v2", "What does BRCA1 do?"): 7 * DAY,
        cache.retrieval_key("v1", "rrf:5", "What does BRCA1 do?"): 3600,
    }
    for key, ttl in expected.items():
        assert client.exists(key), key
        assert ttl - 60 <= client.ttl(key) <= ttl, key
    assert cache.stats()["fallback_switches"] == 0


def test_another_index_version_misses(cache: Cache) -> None:
    cache.set_answer("v1", "quick", "What is glycolysis?", vec(), {"answer": "x"})
    cache.set_retrieval("v1", "rrf:5", "What is glycolysis?", [{"id": "c1"}])
    assert cache.get_answer("v2", "quick", "What is glycolysis?", vec()) is None
    assert cache.get_retrieval("v2", "rrf:5", "What is glycolysis?") is None
    assert cache.get_answer("v1", "quick", "what is glycolysis", vec(0.99)) == ({"answer": "x"}, "semantic")


def test_brca1_answer_is_never_served_for_brca2(cache: Cache) -> None:
    cache.set_answer("v1", "quick", "What does BRCA1 do?", vec(), {"answer": "BRCA1 answer"})
    assert cache.get_answer("v1", "quick", "What does BRCA2 do?", vec()) is None
    assert cache.get_answer("v1", "quick", "what does BRCA1 do", vec()) == ({"answer": "BRCA1 answer"}, "semantic")


def test_outage_falls_back_to_memory_and_recovers(
    cache: Cache, redis_service: RedisService, clock: ManualClock
) -> None:
    cache.set_answer("v1", "quick", "What does TP53 do?", vec(), {"answer": "before"})
    assert cache.backend == "redis"

    assert redis_service.stop()
    # Every call keeps working on the in-process store; none raises.
    assert cache.get_answer("v1", "quick", "What does TP53 do?", vec()) is None
    cache.set_answer("v1", "quick", "What does EGFR do?", vec(), {"answer": "during"})
    cache.set_embedding("m", "What does EGFR do?", [1.0, 2.0])
    assert cache.get_answer("v1", "quick", "What does EGFR do?", None) == ({"answer": "during"}, "exact")
    assert cache.get_embedding("m", "What does EGFR do?") == [1.0, 2.0]
    assert cache.backend == "memory"
    assert cache.stats()["fallback_switches"] == 1

    redis_service.start()  # a new process on the same port
    cache.get_embedding("m", "What does EGFR do?")
    assert cache.backend == "memory", "Redis is retried only once the retry interval has passed"
    clock.advance(RETRY)
    assert cache.backend == "redis"
    cache.set_answer("v1", "quick", "What does KRAS do?", vec(), {"answer": "after"})
    client = redis.Redis.from_url(redis_service.url, decode_responses=True)
    assert client.exists(cache.answer_key("v1", "quick", "What does KRAS do?"))
    assert cache.get_answer("v1", "quick", "What does KRAS do?", None) == ({"answer": "after"}, "exact")
    assert cache.stats()["fallback_switches"] == 1


def unit(seed: int, dim: int = 384) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(dim)
    return v / np.linalg.norm(v)


def at_cosine(base: np.ndarray, cosine: float, seed: int) -> list[float]:
    u = unit(seed, base.shape[0])
    u -= (u @ base) * base
    return (cosine * base + np.sqrt(1.0 - cosine**2) * u / np.linalg.norm(u)).tolist()


def test_semantic_lookups_read_only_their_lsh_buckets_in_redis(cache: Cache, client: redis.Redis) -> None:
    for i in range(300):
        cache.set_answer("v1", "quick", f"What is topic {i}?", unit(i).tolist(), {"answer": str(i)})
    index_key = cache.semantic_index_key("v1", "quick")
    band_keys = sorted(client.scan_iter(f"{index_key}:lsh:*"))
    assert len(band_keys) == 24 and client.hlen(index_key) == 300
    for key in band_keys:  # one member per entry per band, expiring with the entry hash
        assert client.zcard(key) == 300 and 30 * DAY - 60 <= client.ttl(key) <= 30 * DAY, key

    reads: list[int] = []
    real_hmget = cache._redis.hmget  # type: ignore[union-attr]

    def counting_hmget(name: str, keys: list[str]) -> list[str | None]:
        reads.append(len(keys))
        return real_hmget(name, keys)

    cache._redis.hmget = counting_hmget  # type: ignore[method-assign,union-attr]
    query = at_cosine(unit(42), 0.96, seed=1000)
    assert cache.get_answer("v1", "quick", "what is topic 42", query) == ({"answer": "42"}, "semantic")
    assert sum(reads) < 15  # a handful of the 300 entries

    # The answer expires before its index entry: a miss, and the entry leaves the hash and every band set.
    client.delete(cache.answer_key("v1", "quick", "What is topic 42?"))
    assert cache.get_answer("v1", "quick", "what is topic 42", query) is None
    assert client.hlen(index_key) == 299
    assert all(client.zcard(key) == 299 for key in band_keys)


def test_the_in_process_store_answers_bucket_ranges_as_redis_does(client: redis.Redis) -> None:
    members = ["abcd:1", "abcd:2", "abce:3", "abc:4", "abcd;5", "0000:9", "ffff:0"]
    memory, key = MemoryStore(), f"flux-test-{uuid.uuid4().hex[:8]}:z"
    for store in (memory, client):
        store.zadd(key, dict.fromkeys(members, 0))
    try:
        for low, high in [
            ("[abcd:", "(abcd;"),
            ("-", "+"),
            ("(abcd:1", "[abcd;5"),
            ("[0000:", "(0000;"),
            ("[zz", "+"),
            ("-", "(abc"),
        ]:
            assert memory.zrangebylex(key, low, high) == client.zrangebylex(key, low, high), (low, high)
        assert memory.zrem(key, "abcd:1", "nope") == client.zrem(key, "abcd:1", "nope") == 1
        assert memory.zrangebylex(key, "-", "+") == client.zrangebylex(key, "-", "+")
    finally:
        client.delete(key)
