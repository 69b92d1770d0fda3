"""The consoles every `flux` command prints to: results on stdout (COLUMNS wide, 120 when unset, so a pipe or a
test gets whole lines), one-line errors on stderr."""

import os

from rich.console import Console

console = Console(width=int(os.environ.get("COLUMNS", "120")), emoji=False)
# Errors carry text from outside (URLs, paths, server messages): never read as markup ("[a-z]") or emoji (":abc:"),
# never folded: one error is one line.
err_console = Console(stderr=True, markup=False, emoji=False, highlight=False, soft_wrap=True)
