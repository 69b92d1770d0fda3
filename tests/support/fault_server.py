"""A stand-in for the sources' remote APIs (KEGG, Reactome, OpenAlex, E-utilities) that injects faults on demand.

Each path answers from its script (a queue of Replies, consumed one per request), then from its default Reply, then
404. Faults, recording and serving come from the ScriptedServer base (scripted_server.py).
"""

from __future__ import annotations

from collections import defaultdict, deque

from tests.support.scripted_server import RecordedRequest, Reply, ScriptedServer

__all__ = ["FaultServer", "RecordedRequest", "Reply"]


class FaultServer(ScriptedServer):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: dict[str, deque[Reply]] = defaultdict(deque)
        self.defaults: dict[str, Reply] = {}

    def script(self, path: str, *replies: Reply) -> None:
        """Queue replies for `path`, consumed one per request before the default answers."""
        with self._lock:
            self.scripts[path].extend(replies)

    def default(self, path: str, reply: Reply) -> None:
        self.defaults[path] = reply

    def reply_to(self, request: RecordedRequest) -> Reply:
        with self._lock:
            if self.scripts[request.path]:
                return self.scripts[request.path].popleft()
        return self.defaults.get(request.path, Reply(404, b"not found"))
