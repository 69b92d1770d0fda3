"""What the Makefile sets that tests check against, read from the Makefile itself."""

from __future__ import annotations

import re

from dagster_project.core.settings import REPO_ROOT

# The question `make run` asks after building the demo.
SAMPLE_QUESTION = re.search(r"^SAMPLE_QUESTION \?= (.+)$", (REPO_ROOT / "Makefile").read_text(), re.M).group(1)
