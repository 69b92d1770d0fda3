"""The log redaction's e-mail pattern on long text without an address (a 60 KB URL path in an access-log record,
what a hostile request sends): the pattern as it is against the same pattern without its leading lookbehind (the
one before), in this process.

    .venv/bin/python benchmarks/redaction.py

Prints the seconds each takes per length and the ratio; nothing here asserts a timing.
"""

from __future__ import annotations

import re
import time

from retrieval.question.guardrails import _EMAIL

WITHOUT_LOOKBEHIND = re.compile(_EMAIL.pattern.replace("(?<![A-Za-z0-9._%+-])", "", 1))


def _seconds(pattern: re.Pattern[str], text: str) -> float:
    started = time.perf_counter()
    pattern.sub("[email]", text)
    return time.perf_counter() - started


def main() -> None:
    for length in (8_000, 20_000, 60_000):
        text = f"GET /{'a' * length} HTTP/1.1"
        now, before = _seconds(_EMAIL, text), _seconds(WITHOUT_LOOKBEHIND, text)
        print(
            f"{length:>6} characters: {now:.4f} s now, {before:.4f} s without the lookbehind "
            f"({before / max(now, 1e-9):,.0f}x)"
        )


if __name__ == "__main__":
    main()
