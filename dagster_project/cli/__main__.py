"""`python -m dagster_project.cli` is the `flux` command."""

from dagster_project.cli.main import main

main()
