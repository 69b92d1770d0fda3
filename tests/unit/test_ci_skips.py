"""Under CI a skip fails the run and names what was missing; outside CI it stays a skip with its reason."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

SKIPPING = """
import pytest

def test_needs_chromium():
    pytest.skip("no chromium here: apt-get install chromium")

@pytest.mark.xfail(reason="known", strict=True)
def test_expected_failure():
    assert False

def test_runs():
    assert True
"""

SKIPPING_MODULE = """
import pytest
pytest.skip("snapshot data not found at ../shared/data", allow_module_level=True)

def test_never_collected():
    pass
"""


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str, source: str) -> pytest.RunResult:
    monkeypatch.setenv("CI", ci)
    pytester.makepyfile(test_sample=source)
    return pytester.runpytest_inprocess("-p", "tests.support.prerequisites", "-rA", "-p", "no:cacheprovider")


def test_under_ci_a_skip_fails_and_names_the_missing_prerequisite(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(pytester, monkeypatch, "true", SKIPPING)
    result.assert_outcomes(passed=1, failed=1, xfailed=1)
    result.stdout.fnmatch_lines(["*prerequisite is missing and CI is set*no chromium here: apt-get install chromium*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.parametrize("ci", ["", "false", "0"])
def test_outside_ci_a_skip_stays_a_skip_with_its_reason(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    result = _run(pytester, monkeypatch, ci, SKIPPING)
    result.assert_outcomes(passed=1, skipped=1, xfailed=1)
    result.stdout.fnmatch_lines(["*SKIPPED*no chromium here: apt-get install chromium*"])
    assert result.ret == pytest.ExitCode.OK


def test_under_ci_a_module_that_skips_whole_fails_the_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(pytester, monkeypatch, "true", SKIPPING_MODULE)
    assert result.ret != pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*prerequisite is missing and CI is set*snapshot data not found*"])
