"""The base of the providers' contract servers (tests/support/contracts/): a ScriptedServer that answers the way a
provider documents and rejects what it rejects, with the provider's own status, content type and error body.

A subclass implements `serve`; `inject` queues faults (429s, 5xx, timeouts, malformed bodies) that answer a path
before the contract does, so a test can break a well-behaved exchange at one chosen request. `RateWindow` is the
sliding one-second window the providers' request-rate limits are counted in.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Hashable

from tests.support.scripted_server import RecordedRequest, Reply, ScriptedServer

__all__ = ["ContractServer", "RateWindow", "RecordedRequest", "Reply"]


class RateWindow:
    """At most `limit` requests per `per` seconds for each key (an API key, or the caller when there is none).

    The server times arrivals and the client times sends; requests a client spaces exactly at its limit can
    arrive a few milliseconds closer together, so arrivals are counted in a window `grace` seconds shorter
    than `per`. A client that sends even 10 % too fast still overflows it.
    """

    def __init__(
        self, limit: int, per: float = 1.0, grace: float = 0.1, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.window = per - grace
        self._clock = clock
        self._arrivals: dict[Hashable, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()
        self.rejected = 0

    def admit(self, key: Hashable) -> bool:
        """Count this arrival; False when it is one more than the window allows (the request is not served)."""
        with self._lock:
            now = self._clock()
            arrivals = self._arrivals[key]
            while arrivals and arrivals[0] <= now - self.window:
                arrivals.popleft()
            if len(arrivals) >= self.limit:
                self.rejected += 1
                return False
            arrivals.append(now)
            return True


class ContractServer(ScriptedServer):
    """Injected faults first (one per request, per path), then the provider's contract (`serve`)."""

    provider = "provider"

    def __init__(self) -> None:
        super().__init__()
        self.injected: dict[str, deque[Reply]] = defaultdict(deque)
        self.answered: list[tuple[str, int]] = []  # (path, status) of every reply, faults included

    def inject(self, path: str, *replies: Reply) -> None:
        """Answer the next requests for `path` with these replies, in order, before the contract answers again."""
        with self._lock:
            self.injected[path].extend(replies)

    def serve(self, request: RecordedRequest) -> Reply:
        raise NotImplementedError

    def reply_to(self, request: RecordedRequest) -> Reply:
        with self._lock:
            queued = self.injected[request.path].popleft() if self.injected[request.path] else None
        reply = queued or self.serve(request)
        with self._lock:
            self.answered.append((request.path, reply.status))
        return reply

    def statuses(self, path: str | None = None) -> list[int]:
        """The statuses answered, in order (for one path, or all)."""
        return [status for p, status in self.answered if path is None or p == path]
