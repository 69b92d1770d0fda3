"""The semantic answer cache's index: random-hyperplane LSH, so a lookup reads a few candidates, not every entry.

Layout, the same on Redis and on the in-process MemoryStore, for one (index version, variant) whose entry hash is
`index_key`:

    {index_key}                          hash: query digest -> entry JSON (unit vector as float32 base64, tokens, ts)
    {index_key}:lsh:{planes}:{band}      sorted set, every score 0; members "{signature}:{digest}"

A bucket, one per (index version, variant, band, signature), is the lexicographic range of the members that start
with "{signature}:" in its band's set, read with ZRANGEBYLEX. One key per band rather than one per bucket: entries x
bands buckets (48,000 for 2,000 entries) would each cost Redis a whole key, and would flood the in-process store,
whose LRU holds 10,000 keys in all. `planes` fingerprints the hyperplanes, so buckets written under other planes
(another vector dimension, another banding) are never read; they expire with their TTL.

Why the banding (`banding_for`): a random hyperplane separates two unit vectors at angle t with probability t/pi, so
a band of r bits agrees with probability p^r (p = 1 - t/pi) and at least one of b bands with 1 - (1 - p^r)^b. At
the default threshold, cosine 0.95 (semantic_cache_threshold): t = 0.3176 rad, p = 0.89892, and with r = 16 bits
p^16 = 0.18177, so b = 24 bands find a pair at the threshold with probability 0.99189 (23 bands: 0.99009, too close
to the 0.99 bar), 0.99742 at cosine 0.96, more above. For unrelated vectors (cosine 0, p = 1/2) a band agrees with
probability 2^-16, so a lookup reads about 24 / 65,536 = 0.04 % of the entries (3.6 % at cosine 0.5).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from redis.client import Pipeline as RedisPipeline

    from retrieval.caching.cache import Store
    from retrieval.caching.memory_store import MemoryPipeline

    Pipe = MemoryPipeline | RedisPipeline

# The bar is 0.99; aiming a little higher buys a margin (23 bands would clear 0.99 at 0.95 by just 0.0001).
TARGET_RECALL = 0.991
MAX_BITS = 16  # 4 hex digits per signature; more bits per band would need even more bands at the threshold
MAX_BANDS = 64  # past this, fewer bits per band: a lookup reads more candidates but stays cheap to hash
_SEED = 0x5EA4C0DE  # the hyperplanes are this seed plus the dimension: any constant, never to change


@dataclass(frozen=True)
class Banding:
    """`bands` bands of `bits` hyperplane signs each; an entry is a candidate when one band's signature matches."""

    bands: int
    bits: int

    def recall(self, cosine: float) -> float:
        """The probability that a stored vector at `cosine` from the query shares at least one band with it."""
        agree = 1.0 - math.acos(max(-1.0, min(1.0, cosine))) / math.pi
        return 1.0 - (1.0 - agree**self.bits) ** self.bands


@functools.lru_cache(maxsize=32)
def banding_for(threshold: float, target: float = TARGET_RECALL) -> Banding:
    """The most selective banding (most bits per band, then fewest bands) whose recall at `threshold` >= `target`.

    Derived from the threshold rather than fixed, so a deployment that lowers semantic_cache_threshold keeps the
    0.99 recall instead of silently losing hits: 0.95 gives Banding(bands=24, bits=16) (recall 0.99189), 0.90
    Banding(54, 16); below about 0.88 the bands would pass MAX_BANDS, so bands get fewer bits.
    """
    agree = 1.0 - math.acos(max(-1.0, min(1.0, threshold))) / math.pi
    for bits in range(MAX_BITS, 0, -1):
        band_agrees = agree**bits
        if band_agrees >= 1.0:
            return Banding(1, bits)
        bands = math.ceil(math.log(1.0 - target) / math.log(1.0 - band_agrees))
        if bands <= MAX_BANDS:
            return Banding(bands, bits)
    return Banding(MAX_BANDS, 1)  # unreachable for target < 1 - 2^-64; a safe wide net all the same


@functools.lru_cache(maxsize=16)
def _planes(dim: int, total_bits: int) -> tuple[np.ndarray, str]:
    """(dim x total_bits hyperplane normals, their fingerprint). The legacy RandomState is used on purpose: numpy
    freezes its stream, so every process and every numpy version derives the same planes from the dimension."""
    planes = np.random.RandomState(_SEED + dim).standard_normal((dim, total_bits)).astype(np.float32)
    return planes, hashlib.sha256(planes.tobytes()).hexdigest()[:8]


def signatures(unit: np.ndarray, banding: Banding) -> tuple[str, list[str]]:
    """(planes fingerprint, one hex signature per band) of a unit vector."""
    planes, fingerprint = _planes(unit.shape[0], banding.bands * banding.bits)
    signs = (unit @ planes > 0).reshape(banding.bands, banding.bits)
    values = signs.astype(np.int64) @ (1 << np.arange(banding.bits, dtype=np.int64))
    width = (banding.bits + 3) // 4
    return fingerprint, [f"{int(v):0{width}x}" for v in values]


def unit_vector(vector: list[float] | None) -> np.ndarray | None:
    if vector is None or len(vector) == 0:
        return None
    arr = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(arr))
    if arr.ndim != 1 or not np.isfinite(norm) or norm == 0.0:
        return None
    return arr / norm


def encode_entry(unit: np.ndarray, tokens: list[str]) -> str:
    # float32 base64 keeps a 384-d entry ~2 kB: the hash holds up to max_semantic_entries of them.
    vector = base64.b64encode(unit.astype("<f4").tobytes()).decode("ascii")
    return json.dumps({"vector": vector, "tokens": tokens, "ts": time.time()})


def decode_entry(raw: str) -> tuple[np.ndarray | None, list[str], float]:
    """(unit vector, sorted tokens, time stored); a corrupt entry decodes to (None, [], 0) and never matches."""
    try:
        data = json.loads(raw)
        vector = np.frombuffer(base64.b64decode(data["vector"]), dtype="<f4")
        tokens, ts = data["tokens"], float(data["ts"])
    except (ValueError, TypeError, KeyError):
        return None, [], 0.0
    return (vector, tokens, ts) if isinstance(tokens, list) else (None, [], 0.0)


def _buckets(index_key: str, unit: np.ndarray, banding: Banding) -> list[tuple[str, str]]:
    """(band key, signature) per band: where an entry with this vector is filed."""
    fingerprint, sigs = signatures(unit, banding)
    return [(f"{index_key}:lsh:{fingerprint}:{band}", sig) for band, sig in enumerate(sigs)]


def add(
    store: Store, index_key: str, field: str, entry: str, unit: np.ndarray, banding: Banding, ttl: int, max_entries: int
) -> None:
    """File an entry under its buckets, refresh every TTL, and keep only the newest `max_entries` entries.

    The band sets get the entry hash's TTL at the same moment, so they expire together, as the hash alone did.
    """
    pipe = store.pipeline(transaction=False)
    pipe.hset(index_key, field, entry)
    pipe.expire(index_key, ttl)
    for key, sig in _buckets(index_key, unit, banding):
        pipe.zadd(key, {f"{sig}:{field}": 0})
        pipe.expire(key, ttl)
    pipe.hlen(index_key)
    if pipe.execute()[-1] <= max_entries:
        return
    # Over the bound (writes only, once full): drop the oldest, and take them out of their buckets now rather than
    # leaving members whose entry is gone for lookups to trip over.
    entries = store.hgetall(index_key)
    by_age = sorted(entries, key=lambda f: decode_entry(entries[f])[2])
    dropped = by_age[: len(entries) - max_entries]
    pipe = store.pipeline(transaction=False)
    pipe.hdel(index_key, *dropped)
    for old in dropped:
        _unfile(pipe, index_key, old, decode_entry(entries[old])[0], banding)
    pipe.execute()


def candidates(store: Store, index_key: str, unit: np.ndarray, banding: Banding) -> list[tuple[str, str]]:
    """(digest, raw entry) of every entry sharing a bucket with `unit`: one ZRANGEBYLEX per band, one HMGET.

    A member whose entry is gone (the hash expired or was evicted before its band sets) is removed from the band
    sets here, lazily; it never yields an answer because there is no entry to verify.
    """
    buckets = _buckets(index_key, unit, banding)
    pipe = store.pipeline(transaction=False)
    for key, sig in buckets:
        pipe.zrangebylex(key, f"[{sig}:", f"({sig};")  # ";" follows ":", so this is exactly the "{sig}:" prefix
    found: dict[str, list[tuple[str, str]]] = {}  # digest -> (band key, member) it was found under
    for (key, _), members in zip(buckets, pipe.execute(), strict=True):
        for member in members:
            found.setdefault(member.partition(":")[2], []).append((key, member))
    if not found:
        return []
    fields = list(found)
    raws = store.hmget(index_key, fields)
    stale = [hit for field, raw in zip(fields, raws, strict=True) if raw is None for hit in found[field]]
    if stale:
        pipe = store.pipeline(transaction=False)
        for key, member in stale:
            pipe.zrem(key, member)
        pipe.execute()
    return [(field, raw) for field, raw in zip(fields, raws, strict=True) if raw is not None]


def forget(store: Store, index_key: str, field: str, unit: np.ndarray | None, banding: Banding) -> None:
    """Remove an entry (its answer expired or is corrupt) from the hash and from its buckets."""
    pipe = store.pipeline(transaction=False)
    pipe.hdel(index_key, field)
    _unfile(pipe, index_key, field, unit, banding)
    pipe.execute()


def _unfile(pipe: Pipe, index_key: str, field: str, unit: np.ndarray | None, banding: Banding) -> None:
    if unit is None or unit.size == 0:
        return  # a corrupt entry's buckets are unknown; lookups never reach them through it, and they expire
    for key, sig in _buckets(index_key, unit, banding):
        pipe.zrem(key, f"{sig}:{field}")
