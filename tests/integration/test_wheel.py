"""The wheel runs without the checkout: `make wheel` builds it, it installs into a fresh virtual environment outside
the repository, and there the definitions load (the dbt assets from the packaged manifest), the shipped resolution
model, eval sets, demo data, migrations, retrieval rules and the page are found in the installed package.

The fresh environment gets the third-party dependencies by a path entry to this checkout's site-packages (no
network, no second install of ~700 packages) but not its .pth files, so the editable install of this checkout
is invisible there: the probe asserts that every Flux module it imports comes from the installed wheel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

from dagster_project.core.settings import REPO_ROOT

PROBE = r"""
import json, sys
from pathlib import Path
import dagster_project, retrieval, serving
from dagster_project.core.settings import FluxSettings
from dagster_project.core.setting_groups import IN_CHECKOUT, PACKAGE_DIR
from dagster_project.defs.definitions import build_definitions
from dagster_project.evals.heldout import DEV_FILE
from dagster_project.resolution.model import MODEL_PATH, load_resolution_model
from dagster_project.storage.migrate import load_migrations
from retrieval.answering.grounding import RULE_PATH
from retrieval.answering.answerability import MODEL_PATH
from serving.web import WEB_DIR

settings = FluxSettings()
graph = build_definitions(settings).resolve_asset_graph()
keys = [k.to_user_string() for k in graph.get_all_asset_keys()]
print(json.dumps({
    "modules": [m.__file__ for m in (dagster_project, retrieval, serving)],
    "in_checkout": IN_CHECKOUT, "package_dir": str(PACKAGE_DIR),
    "assets": len(keys), "dbt_assets": sum(graph.get(k).group_name == "dbt" for k in graph.get_all_asset_keys()),
    "model": load_resolution_model().method_version, "model_path": str(MODEL_PATH),
    "dev_questions": len(json.loads(Path(DEV_FILE).read_text())),
    "demo_files": sum(1 for p in settings.sources.demo_dir.rglob("*") if p.is_file()),
    "migrations": len(load_migrations("postgres")) + len(load_migrations("neo4j")),
    "rule": RULE_PATH.is_file(), "answerability": MODEL_PATH.is_file(), "page": (WEB_DIR / "index.html").is_file(),
    "home": str(settings.home),
}))
"""


def test_the_wheel_installed_outside_the_checkout_loads_the_definitions_and_finds_its_data(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        ["make", "-s", "wheel", f"WHEEL_DIR={wheels}"], cwd=REPO_ROOT, check=True, timeout=600, capture_output=True
    )
    (wheel,) = wheels.glob("flux-*.whl")
    env_dir = tmp_path / "fresh"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "flux_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [Path(sys.executable).parent / "uv", "pip", "install", "-q", "--python", python, "--no-deps", wheel],
        check=True,
        timeout=300,
    )
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLUX_") and k != "PYTHONPATH"}
    result = subprocess.run(
        [python, "-c", PROBE], cwd=tmp_path, env={**env, "HOME": str(home)}, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert all(str(site) in path for path in found["modules"]), found["modules"]
    assert not found["in_checkout"] and found["package_dir"].startswith(str(site))
    assert found["model_path"].startswith(str(site)) and found["model"]
    assert found["assets"] >= 30 and found["dbt_assets"] >= 10, found
    assert found["dev_questions"] > 0 and found["demo_files"] >= 20 and found["migrations"] >= 2, found
    assert found["rule"] and found["answerability"] and found["page"], found
    assert found["home"] == str(home / ".flux")  # an installed Flux keeps its state in the user's home
