import os
from collections.abc import Iterator

import pytest

from dagster_project.core.settings import get_settings


@pytest.fixture(autouse=True)
def isolated_flux_env() -> Iterator[None]:
    """Unit tests see only the FLUX_ variables they set themselves, never the developer's."""
    saved = dict(os.environ)
    for key in [k for k in os.environ if k.startswith("FLUX_")]:
        del os.environ[key]
    get_settings.cache_clear()
    yield
    os.environ.clear()
    os.environ.update(saved)
    get_settings.cache_clear()
