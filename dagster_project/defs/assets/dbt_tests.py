"""What each dbt data test checks, in words, for its asset check's description in the Dagster UI: a sentence built
from the generic test and its arguments (dbt's `test_metadata`), or a singular test's leading SQL comment; then the
test's own yml `description` (why it is only a warning, say); then its severity."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REF = re.compile(r"""ref\(\s*['"]([^'"]+)['"]\s*\)""")


def describe_dbt_test(test: Mapping[str, Any]) -> str:
    severity = str(test.get("config", {}).get("severity", "ERROR")).lower()
    what = _generic(test) or _leading_comment(test) or test["name"]
    why = (test.get("description") or "").strip()  # the yml's reason, e.g. for a warn-only test
    return f"{what} {why} (dbt test, severity {severity})" if why else f"{what} (dbt test, severity {severity})"


def _generic(test: Mapping[str, Any]) -> str | None:
    metadata = test.get("test_metadata") or {}
    kwargs, column = metadata.get("kwargs", {}), f"`{test.get('column_name')}`"
    match metadata.get("name"):
        case "not_null":
            return f"Every row has a {column}."
        case "unique":
            return f"No two rows share a {column}."
        case "relationships":
            target = REF.search(str(kwargs.get("to", "")))
            table = target.group(1) if target else kwargs.get("to")
            return f"Every {column} is a `{kwargs.get('field')}` of `{table}`."
        case "accepted_values":
            return f"{column} is one of: {', '.join(map(str, kwargs.get('values', [])))}."
        case "flux_between":
            low, high = kwargs.get("min_value"), kwargs.get("max_value")
            bounds = [f"≥ {low}" if low is not None else "", f"≤ {high}" if high is not None else ""]
            return f"{column} is {' and '.join(b for b in bounds if b)}."
    return None


def _leading_comment(test: Mapping[str, Any]) -> str | None:
    lines = [
        line.strip()[2:].strip() for line in str(test.get("raw_code", "")).splitlines() if line.strip().startswith("--")
    ]
    return " ".join(lines) or None
