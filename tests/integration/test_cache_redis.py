"""The caches against a real redis-server this module starts itself (own port, own FLUX_HOME under tmp_path),
including an outage in the middle of a test and the return to Redis after a restart."""

from __future__ import annotations

import uuid

import pytest
import redis

from dagster_project.stack.redis import RedisService
from retrieval.caching.cache import Cache
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


def test_outage_falls_back_to_memory_and_recovers(cache: Cache, redis_service: RedisService,
                                                  clock: ManualClock) -> None:
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
