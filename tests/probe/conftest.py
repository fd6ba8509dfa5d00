"""Helpers of the probe's tests: the payload exactly as a kernel receives it, in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest

from crane_jupyterlab.server import payload


def payload_script(body: str) -> str:
    """Code for a fresh interpreter that installs the payload as a kernel gets it (the same install
    expression, no crane_jupyterlab on the path needed) and binds `run` to the probe's entry point,
    then runs `body`."""
    current = payload._SOURCES.current()
    return (
        f"import sys\n_env = {current.install_prefix}\n"
        f"assert sys.modules.get({current.key + '.envelope'!r}) is _env, 'payload did not install'\n"
        f"run = sys.modules[{current.key + '.probe'!r}].run\n{body}"
    )


def run_payload(body: str, python: str = sys.executable, timeout: float = 120) -> object:
    """Run `payload_script(body)` in a fresh `python` (cwd /, so nothing local is importable); `body`
    prints one JSON line last, which is returned."""
    out = subprocess.run(
        [python, "-I", "-"],  # the script on stdin: one argument may not exceed 128 KiB (MAX_ARG_STRLEN)
        input=payload_script(body),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd="/",
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def payload_run() -> Callable[..., object]:
    """run_payload(body, python=...): `body` run after the payload is installed in a fresh interpreter."""
    return run_payload
