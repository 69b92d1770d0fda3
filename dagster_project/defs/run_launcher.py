"""The instance's run launcher: Dagster's default one (runs go to the code server that serves their location), with
the worker health check Dagster's run monitoring asks for.

With it the daemon's monitoring (dagster.yaml `run_monitoring`, every 30 s) fails a started run whose process is
gone, with no command being run: a run worker killed, or a `flux materialize --in-process` interrupted. The check
judges only what this machine can (dead_runs.py): a run of another host, one not yet started, or one whose process
never recorded its pid is reported running, since the monitor fails anything else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

import dagster as dg
from dagster._core.launcher import CheckRunHealthResult, DefaultRunLauncher, WorkerStatus
from dagster._core.storage.dagster_run import DagsterRun
from dagster._serdes import ConfigurableClassData

from dagster_project.core.settings import get_settings
from dagster_project.defs.dead_runs import gone_worker, remove_dbt_targets


class FluxRunLauncher(DefaultRunLauncher):
    @classmethod
    def from_config_value(cls, inst_data: ConfigurableClassData, config_value: Mapping[str, Any]) -> Self:
        return cls(inst_data=inst_data)

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        records = self._instance.get_run_records(dg.RunsFilter(run_ids=[run.run_id]), limit=1)
        record = records[0] if records else None
        pid = gone_worker(self._instance, record) if record is not None else None
        if pid is None:
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        remove_dbt_targets(get_settings().home, run.run_id)
        return CheckRunHealthResult(
            WorkerStatus.FAILED, f"the run's process (pid {pid}) is gone: it was killed or its machine restarted"
        )
