"""`crane-bench serverspeed`: what the server adds on top of the kernel round trip and the model call.

A real jupyter_server with the crane extension runs in this process on 127.0.0.1; a kernel started by
its own kernel manager builds the state of a `crane-bench speed` scenario; then POST /crane/analyze is
timed from an HTTP client, request after request (the target varies by a comment, so no answer comes
from the verdict cache). Per request:

    server overhead = client round trip - kernel round trip (the probe call) - model call

i.e. HTTP on localhost, auth, body validation, the per-kernel lock, rendering the runtime text, the
deterministic checks, assembling and serialising the answer. Reported: p50/p95; goal p50 <= 50 ms.
For scale, an authenticated GET /api/status (jupyter_server's own floor) is timed after each request.
Without --model the checks decide (no model call); point --model/--api-base at any OpenAI-compatible
server to include the LLM path (e.g. `python tests/llm_stub.py --port 8099` and
`--model openai/stub --api-base http://127.0.0.1:8099/v1`); prompt building then counts as model call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import secrets
import socket
import statistics
import sys
import tempfile
import time
from typing import Any

from .speed import SCENARIOS

GOAL_P50_MS = 50.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "serverspeed",
        help="server-side overhead of POST /crane/analyze",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--requests", type=int, default=30, help="timed requests (default 30)")
    p.add_argument("--warmup", type=int, default=3, help="untimed requests first (default 3)")
    p.add_argument("--scenario", choices=sorted(SCENARIOS), default="typical", help="kernel state")
    p.add_argument("--model", default="", help="litellm model (default: none, the checks decide)")
    p.add_argument("--api-base", default="", help="OpenAI-compatible endpoint for --model")
    p.add_argument("--json", action="store_true", help="print one JSON line instead of the table")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.requests < 1 or args.warmup < 0:
        print("crane-bench serverspeed: --requests must be >= 1 and --warmup >= 0", file=sys.stderr)
        return 2
    report = asyncio.run(measure(args))
    print(json.dumps(report) if args.json else table(report))
    return 0


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    from jupyter_client.session import Session
    from tornado.httpclient import AsyncHTTPClient
    from tornado.httpserver import HTTPServer

    from .kernels import run_cell

    scenario = SCENARIOS[args.scenario]
    with tempfile.TemporaryDirectory(prefix="crane-serverspeed-") as root:
        app, token = _server_app(root, args)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        sock.setblocking(False)
        http = HTTPServer(app.web_app)
        http.add_sockets([sock])
        port = sock.getsockname()[1]
        await app._post_start()  # the extensions' start hooks, as `jupyter server` runs them
        client = AsyncHTTPClient()
        kc = None
        try:
            print(
                f"serverspeed: building the {args.scenario!r} kernel state ...", file=sys.stderr, flush=True
            )
            kernel_id = await app.kernel_manager.start_kernel(kernel_name="python3")
            manager = app.kernel_manager.get_kernel(kernel_id)
            kc = manager.client(session=Session(key=manager.session.key))
            kc.start_channels()
            await kc.wait_for_ready(timeout=120)
            await run_cell(kc, scenario.setup, timeout=600)
            url = f"http://127.0.0.1:{port}{app.base_url}crane/analyze"
            status_url = f"http://127.0.0.1:{port}{app.base_url}api/status"
            headers = {"Authorization": f"token {token}"}
            rows = []
            for i in range(args.warmup + args.requests):
                body = json.dumps({"kernel_id": kernel_id, "source": f"{scenario.target}\n# run {i}"})
                await _until_idle(manager)
                started = time.perf_counter()
                response = await client.fetch(
                    url, method="POST", body=body, headers=headers, request_timeout=300
                )
                client_ms = (time.perf_counter() - started) * 1000
                reply = json.loads(response.body)
                if i >= args.warmup:
                    rows.append(_row(client_ms, reply))
                    # jupyter_server's own floor: an authenticated GET of a trivial endpoint.
                    started = time.perf_counter()
                    await client.fetch(status_url, headers=headers, request_timeout=60)
                    rows[-1]["baseline_ms"] = (time.perf_counter() - started) * 1000
        finally:
            if kc is not None:
                kc.stop_channels()
            client.close()
            http.stop()
            await app._cleanup()
            type(app).clear_instance()
    return _summary(args, rows)


def _server_app(root: str, args: argparse.Namespace) -> tuple[Any, str]:
    from jupyter_server.serverapp import ServerApp
    from traitlets.config import Config

    token = secrets.token_hex(16)
    config = Config()
    config.ServerApp.jpserver_extensions = {"crane_jupyterlab": True, "jupyter_server_terminals": False}
    config.ServerApp.root_dir = root
    config.ServerApp.open_browser = False
    config.ServerApp.log_level = "WARN"
    config.IdentityProvider.token = token
    config.CraneExtension.model = args.model
    config.CraneExtension.api_base = args.api_base
    app = ServerApp.instance(config=config)
    app.initialize(argv=[], new_httpserver=False)
    app.log.setLevel(logging.WARNING)
    return app, token


async def _until_idle(kernel: Any, timeout: float = 5.0) -> None:
    """A request behind the previous one's probe, not behind its status message: the measure is the
    server's, not the IOPub watcher's lag."""
    deadline = time.monotonic() + timeout
    while kernel.execution_state == "busy" and time.monotonic() < deadline:
        await asyncio.sleep(0.002)


def _row(client_ms: float, reply: dict[str, Any]) -> dict[str, Any]:
    timing = reply.get("timing") or {}
    kernel_ms = float(timing.get("extraction_ms", 0.0))
    llm_ms = float(timing.get("llm_ms", 0.0))
    return {
        "status": reply.get("status"),
        "client_ms": client_ms,
        "kernel_ms": kernel_ms,
        "llm_ms": llm_ms,
        "overhead_ms": client_ms - kernel_ms - llm_ms,
        "service_overhead_ms": float(timing.get("total_ms", 0.0)) - kernel_ms - llm_ms,
    }


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 2), "p95": round(p95, 2)}


def _summary(args: argparse.Namespace, rows: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("client_ms", "kernel_ms", "llm_ms", "overhead_ms", "service_overhead_ms", "baseline_ms")
    stats = {key: _percentiles([r[key] for r in rows]) for key in keys}
    return {
        "scenario": args.scenario,
        "model": args.model or None,
        "requests": len(rows),
        "statuses": sorted({str(r["status"]) for r in rows}),
        **stats,
        "goal": f"overhead p50 <= {GOAL_P50_MS:g} ms",
        "met": stats["overhead_ms"]["p50"] <= GOAL_P50_MS,
    }


def table(report: dict[str, Any]) -> str:
    labels = {
        "client_ms": "client round trip",
        "kernel_ms": "kernel round trip (probe)",
        "llm_ms": "model call",
        "overhead_ms": "server overhead",
        "service_overhead_ms": "  of which inside the service",
        "baseline_ms": "GET /api/status (server floor)",
    }
    lines = [
        f"scenario {report['scenario']}, model {report['model'] or 'none (checks only)'}, "
        f"{report['requests']} requests, statuses {', '.join(report['statuses'])}",
        f"{'':<30} {'p50 ms':>9} {'p95 ms':>9}",
    ]
    for key, label in labels.items():
        lines.append(f"{label:<30} {report[key]['p50']:>9.2f} {report[key]['p95']:>9.2f}")
    lines.append(f"goal: {report['goal']}: {'met' if report['met'] else 'NOT met'}")
    lines.append("server overhead = client round trip - kernel round trip - model call")
    return "\n".join(lines)
