"""A schedule or sensor tick whose settings no longer hold (a raw root that cannot be written, a live contact
address no provider can reach) fails in one line naming the setting and requests no run; the next tick after the
fix requests its run. Evaluated as the code server evaluates a tick for the daemon (`dagster._grpc.impl`), so the
error is the one the daemon records on the tick and the UI shows."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
from dagster._core.definitions.sensor_definition import SensorExecutionData
from dagster._core.remote_representation.external_data import ScheduleExecutionErrorSnap, SensorExecutionErrorSnap
from dagster._grpc.impl import get_external_schedule_execution, get_external_sensor_execution

from dagster_project.core.settings import FluxSettings
from dagster_project.defs.definitions import build_definitions
from dagster_project.defs.pull_settings import PullSettingsError, check_pull_settings
from dagster_project.defs.schedules import NIGHTLY_SCHEDULE
from dagster_project.defs.sensors import SNAPSHOT_SENSOR


def _repository(settings: FluxSettings) -> dg.RepositoryDefinition:
    return build_definitions(settings).get_repository_def()


def _blocked_raw_root(tmp_path: Path) -> tuple[Path, Path]:
    """A raw root under a plain file: no user, root included, can create it."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the raw root's parent should be")
    return blocker, blocker / "raw"


def _schedule_tick(repository: dg.RepositoryDefinition) -> object:
    return get_external_schedule_execution(repository, None, NIGHTLY_SCHEDULE, None, None, None)


def _sensor_tick(repository: dg.RepositoryDefinition, cursor: str) -> object:
    return get_external_sensor_execution(repository, None, None, SNAPSHOT_SENSOR, None, None, cursor, None, None)  # type: ignore[arg-type]


def _one_line_naming(error: object, variable: str) -> str:
    assert isinstance(error, ScheduleExecutionErrorSnap | SensorExecutionErrorSnap), error
    message = error.error.message.strip()
    assert "\n" not in message and variable in message, message
    assert message.startswith("dagster_project.defs.pull_settings.PullSettingsError: "), message
    assert error.error.cause is None  # not wrapped in Dagster's "Error occurred during the execution of …"
    return message


def test_a_schedule_tick_on_an_unwritable_raw_root_fails_in_one_line_and_the_next_proceeds(tmp_path: Path) -> None:
    blocker, raw_root = _blocked_raw_root(tmp_path)
    repository = _repository(FluxSettings(raw_root=str(raw_root)))
    message = _one_line_naming(_schedule_tick(repository), "FLUX_RAW_ROOT")
    assert str(blocker) in message
    blocker.unlink()
    fixed = _schedule_tick(repository)
    assert not isinstance(fixed, ScheduleExecutionErrorSnap), fixed
    [request] = fixed.run_requests  # type: ignore[attr-defined]
    assert request.tags["flux/trigger"] == "schedule" and request.tags["flux/raw_root"] == str(raw_root)


def test_a_sensor_tick_that_would_pull_into_an_unwritable_raw_root_fails_in_one_line(tmp_path: Path) -> None:
    """Live mode has no files to watch; in demo mode a changed folder requests the pulls, unless the raw root
    cannot hold them. The cursor stays where it was, so the tick after the fix requests the run."""
    blocker, raw_root = _blocked_raw_root(tmp_path)
    repository = _repository(FluxSettings(raw_root=str(raw_root)))
    _one_line_naming(_sensor_tick(repository, cursor="a hash of other files"), "FLUX_RAW_ROOT")
    blocker.unlink()
    fixed = _sensor_tick(repository, cursor="a hash of other files")
    assert isinstance(fixed, SensorExecutionData) and len(fixed.run_requests or []) == 1, fixed
    assert fixed.cursor != "a hash of other files"


@pytest.mark.parametrize("email", ["flux@example.org", "nobody", "team@localhost"])
def test_a_live_pull_without_a_reachable_contact_is_refused_by_name(email: str, tmp_path: Path) -> None:
    settings = FluxSettings(source_mode="live", contact_email=email, raw_root=str(tmp_path / "raw"))
    with pytest.raises(PullSettingsError, match="FLUX_CONTACT_EMAIL") as refused:
        check_pull_settings(settings)
    assert "\n" not in str(refused.value)
    check_pull_settings(settings.evolve(contact_email="data-team@flux-lab.org"))


def test_a_snapshot_folder_missing_files_fails_the_schedule_but_not_a_single_pull_command(tmp_path: Path) -> None:
    settings = FluxSettings(source_mode="snapshot", snapshot_dir=tmp_path / "snapshot", raw_root=str(tmp_path / "r"))
    with pytest.raises(PullSettingsError, match=r"FLUX_SNAPSHOT_DIR .* lacks .* and \d+ more"):
        check_pull_settings(settings)
    check_pull_settings(settings, snapshot_files=False)  # `flux materialize` leaves that to the pull it selects
