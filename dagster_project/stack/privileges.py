"""Who the local servers run as: never root.

Started by root, Postgres, Neo4j and Redis run as one unprivileged system user (FLUX_SERVICE_USER). The drop
changes uid, gid *and* supplementary groups together: changing the uid alone leaves the child in gid 0 and
root's groups, and Linux then checks a root-owned folder's *group* bits for it, so a folder that grants o+x
but no group bits (a 0701 parent of a clone under /root or `mktemp -d`) stays closed to the server.
Started by anyone else, the servers simply run as that user.
"""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagster_project.stack.process import ServiceStartError


@dataclass(frozen=True)
class ServiceUser:
    """The account a server process runs as."""

    name: str
    uid: int
    gid: int
    home: Path

    def popen_kwargs(self) -> dict[str, Any]:
        """`subprocess` arguments that drop all three identities in the child, before exec."""
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The child's environment: root's HOME would be unwritable to it (Java writes preferences there)."""
        env = dict(os.environ if base is None else base)
        env |= {"HOME": str(self.home), "USER": self.name, "LOGNAME": self.name}
        return env


def running_as_root() -> bool:
    return os.geteuid() == 0


def service_user(name: str, home: Path) -> ServiceUser | None:
    """The unprivileged account for servers when we are root (created once as a system user); None otherwise."""
    if not running_as_root():
        return None
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        result = subprocess.run(
            ["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise ServiceStartError(
                f"could not create the service user {name!r} (FLUX_SERVICE_USER): {result.stderr.strip()}"
            ) from None
        entry = pwd.getpwnam(name)
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise ServiceStartError(f"FLUX_SERVICE_USER {name!r} has uid or gid 0; name an unprivileged account")
    return ServiceUser(name=name, uid=entry.pw_uid, gid=entry.pw_gid, home=home)


def make_traversable(paths: Iterable[Path]) -> None:
    """Give every folder above each path o+x (traverse only: no listing, no reading) so the service user can
    reach it. With the groups dropped, the 'other' bits are the ones that apply to it."""
    seen: set[Path] = set()
    for path in paths:
        for parent in Path(path).resolve().parents:
            if parent in seen:
                continue
            seen.add(parent)
            mode = parent.stat().st_mode
            if not mode & stat.S_IXOTH:
                parent.chmod(mode | stat.S_IXOTH)


def hand_over(user: ServiceUser, data_dir: Path, reads: Iterable[Path] = ()) -> None:
    """Everything a server needs before it starts as `user`: its data folder and home are its own, and it can
    reach those and the files in `reads` (binaries, jars, a password file)."""
    own_tree(data_dir, user)
    own_tree(user.home, user)
    make_traversable([data_dir, user.home, *reads])


def own_tree(path: Path, user: ServiceUser) -> None:
    """Hand a data folder to the service user, including entries made by root before servers ran unprivileged.
    Only entries with another owner are changed, so a routine start costs one stat per entry."""
    path.mkdir(parents=True, exist_ok=True)
    for entry in _tree(path):
        st = entry.lstat()
        if st.st_uid != user.uid or st.st_gid != user.gid:
            os.chown(entry, user.uid, user.gid, follow_symlinks=False)


def _tree(path: Path) -> Iterable[Path]:
    yield path
    for root, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            yield Path(root) / name


def own_file(path: Path, user: ServiceUser | None, mode: int = 0o600) -> None:
    """A single file the server reads or writes (its log, a password file), owned by it and private."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(exist_ok=True)
    if user is not None:
        os.chown(path, user.uid, user.gid)
    path.chmod(mode)
