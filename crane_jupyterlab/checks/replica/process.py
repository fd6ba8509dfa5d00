"""The server's side of the replica process (`runner.py`): one warm process, started ahead of need.

The process imports the libraries replicas are made of once (seconds: torch, scikit-learn, pandas), then
answers each request within the request's budget, its variants forked into the trial's sandbox. A request
that arrives while it is still warming up is not kept waiting: the judge abstains ("warming up") and the
user's badge is not held back for it. A process that dies, answers something unreadable or overruns is
killed and replaced.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import threading
import time
from typing import Any

# Seconds beyond a request's budget that its answer may take: forking the variants, entering the
# sandbox (runner.SETUP_S), reaping them.
SLACK_S = 2.0
# Seconds the process may take to import its libraries before it is given up.
WARM_S = 120.0


class Server:
    """One warm replica process. Requests are answered one at a time."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()  # one request at a time
        self._start_lock = threading.Lock()
        self._warm = threading.Event()
        self.libraries: list[str] = []
        self.warm_error: str | None = None

    def start(self) -> None:
        """Start the process where none runs; its warm-up goes on in the background."""
        with self._start_lock:
            if self._proc is not None and self._proc.poll() is None:
                return
            self._warm = threading.Event()
            self.warm_error = None
            env = dict(os.environ, MPLBACKEND="Agg", PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "crane_jupyterlab.checks.replica.runner"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=env,
                start_new_session=True,
            )
            threading.Thread(target=self._await_warm, args=(self._proc, self._warm), daemon=True).start()

    def _await_warm(self, proc: subprocess.Popen[str], warm: threading.Event) -> None:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], WARM_S)
        line = proc.stdout.readline() if ready else ""
        try:
            said = json.loads(line) if line else {}
        except ValueError:
            said = {}
        if said.get("phase") == "warm":
            self.libraries = list(said.get("libraries") or [])
            warm.set()
            return
        self.warm_error = "the replica process did not warm up" if not line else "unreadable warm-up"
        self._kill(proc)

    def wait_warm(self, timeout: float) -> bool:
        """Start the process if needed and wait until it is warm (benchmarks and tests)."""
        self.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._warm.wait(0.1):
                return True
            if self._proc is None or self._proc.poll() is not None:
                return False
        return False

    def ask(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        """The process's answer, or {"error": why} (never waits for a process still warming up)."""
        self.start()
        if not self._warm.is_set():
            return {"error": "the replica process is warming up", "warming": True}
        with self._lock:
            proc = self._proc
            if proc is None or proc.poll() is not None or proc.stdin is None or proc.stdout is None:
                return {"error": "the replica process ended"}
            try:
                proc.stdin.write(json.dumps(request, default=str) + "\n")
                proc.stdin.flush()
                ready, _, _ = select.select([proc.stdout], [], [], timeout)
                line = proc.stdout.readline() if ready else ""
            except (OSError, ValueError) as exc:
                self.close()
                return {"error": f"the replica process failed: {exc}"}
            if not line:
                self.close()
                return {"error": f"no answer from the replica process within {timeout:g} s"}
            try:
                answer = json.loads(line)
            except ValueError:
                self.close()
                return {"error": "the replica process answered something unreadable"}
            return answer if isinstance(answer, dict) else {"error": "unreadable answer"}

    @staticmethod
    def _kill(proc: subprocess.Popen[str]) -> None:
        if proc.poll() is None:
            proc.kill()
        proc.wait()

    def close(self) -> None:
        with self._start_lock:
            proc, self._proc = self._proc, None
            self._warm = threading.Event()
        if proc is not None:
            self._kill(proc)


server = Server()
atexit.register(server.close)


def run(request: dict[str, Any]) -> dict[str, Any]:
    """The runner's answer ({"variants": [...]}) within the request's budget; {"error": ...} when none."""
    return server.ask(request, float(request.get("budget_s") or 2.0) + SLACK_S)
