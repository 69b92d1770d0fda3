"""Questions about what a source release changed: "What changed in KEGG's cell cycle pathway since the previous
release?", "Which genes did Apoptosis gain in the latest Reactome release?"."""

from __future__ import annotations

import re

# A change word and a release word, in either order; "since the last release" alone says it too.
_CHANGE = r"(chang\w*|new|differ\w*|added|removed|gain\w*|lost|los[et]\w*|updat\w*|renam\w*|revis\w*)"
_RELEASE = r"(releases?|versions?|refresh\w*|updates?|editions?)"
_ASKS_CHANGE = re.compile(
    rf"\b{_CHANGE}\b.*\b{_RELEASE}\b|\b{_RELEASE}\b.*\b{_CHANGE}\b|"
    rf"\bsince (the )?(previous|last|prior|earlier|older) {_RELEASE}\b",
    re.I,
)


def asks_release_change(question: str) -> bool:
    return bool(_ASKS_CHANGE.search(question))
