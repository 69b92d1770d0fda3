"""A code process left behind by its stopped code server is killed, not left holding its memory."""

from __future__ import annotations

import signal
import subprocess
import sys

import psutil

from dagster_project.stack.process import stop_left_behind

# Like Dagster's code process: SIGTERM and SIGINT ignored, and it would otherwise wait forever.
DEAF = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(600)"


def test_a_code_process_that_ignores_sigterm_is_killed_after_the_grace() -> None:
    child = subprocess.Popen([sys.executable, "-c", DEAF], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        child.send_signal(signal.SIGTERM)
        assert psutil.Process(child.pid).status() != psutil.STATUS_ZOMBIE  # SIGTERM alone leaves it running
        process = psutil.Process(child.pid)
        assert stop_left_behind([process], grace_s=0.2) == [process]
        assert not process.is_running() and process.returncode == -signal.SIGKILL
    finally:
        child.kill()


def test_a_code_process_that_exits_in_the_grace_is_not_killed() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.1)"])
    process = psutil.Process(child.pid)
    assert stop_left_behind([process], grace_s=10) == []
    assert process.returncode == 0
