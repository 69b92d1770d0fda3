"""HGNC's complete-set download as its host serves it: a Google Cloud Storage public object
(storage.googleapis.com/public-download-files/hgnc/…; GCS XML API "GET Object").

What it enforces: GET only; the object at its path or a 404 with GCS's XML `NoSuchKey` error body; `Last-Modified`
(what Flux records as the HGNC release) and an ETag on every answer; a `Range: bytes=a-b` request answered 206 with
`Content-Range`, as GCS does (what `flux sources check` reads instead of the whole 15 MB file).

Payload: the bundled demo's `hgnc_complete_set.txt`, in the complete set's own column layout.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from tests.support.contract_server import ContractServer, RecordedRequest, Reply

OBJECT_PATH = "/public-download-files/hgnc/tsv/tsv/hgnc_complete_set.txt"
LAST_MODIFIED = "Tue, 01 Dec 2026 03:12:44 GMT"
NO_SUCH_KEY = (
    b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>NoSuchKey</Code>"
    b"<Message>The specified key does not exist.</Message></Error>"
)


class HgncContractServer(ContractServer):
    provider = "HGNC downloads"

    def __init__(self, complete_set: Path) -> None:
        super().__init__()
        self.body = complete_set.read_bytes()
        self.headers = {
            "Content-Type": "text/plain",
            "Last-Modified": LAST_MODIFIED,
            "ETag": f'"{hashlib.md5(self.body).hexdigest()}"',
        }  # GCS ETags are MD5s

    @property
    def object_url(self) -> str:
        return self.url + OBJECT_PATH

    def serve(self, request: RecordedRequest) -> Reply:
        if request.method != "GET" or request.path != OBJECT_PATH:
            return Reply(404, NO_SUCH_KEY, {"Content-Type": "application/xml; charset=UTF-8"})
        wanted = re.fullmatch(r"bytes=(\d+)-(\d+)", request.headers.get("Range", ""))
        if wanted:
            start, end = int(wanted.group(1)), min(int(wanted.group(2)), len(self.body) - 1)
            return Reply(
                206,
                self.body[start : end + 1],
                self.headers | {"Content-Range": f"bytes {start}-{end}/{len(self.body)}"},
            )
        return Reply(200, self.body, self.headers)
