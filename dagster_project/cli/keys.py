"""`flux keys new`: API keys for the HTTP service (only their hashes are configured)."""

from __future__ import annotations

import typer

from dagster_project.cli.output import console

keys_app = typer.Typer(help="API keys for the HTTP service.", no_args_is_help=True)


@keys_app.command("new")
def keys_new() -> None:
    """A new random API key, and the hash to put in FLUX_API_KEYS (the service then never holds the key)."""
    import secrets

    from serving.security import key_hash

    key = f"flux_{secrets.token_urlsafe(32)}"
    console.print(f"key (give it to the client, it is not stored anywhere): {key}")
    console.print(f"FLUX_API_KEYS entry: {key_hash(key)}")
