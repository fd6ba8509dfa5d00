"""`crane-bench`: how crane-jupyterlab measures itself.

Each sub-command lives in its own module of this package and exposes
`register(subparsers) -> None`, which adds its parser and sets `func` (called with the parsed
arguments, returns the exit code).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

# Sub-command modules, in the order `--help` lists them.
SUBCOMMANDS = ("live", "verify", "junobench", "speed", "serverspeed")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crane-bench",
        description=(
            "Benchmarks of crane-jupyterlab: the live crash suite (and verifying a suite's cases), JunoBench,"
            " and speed."
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"crane_jupyterlab.bench.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"crane_jupyterlab.bench.{name}":
                raise
            continue  # sub-command not built yet
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # litellm must never reach for the network at import time.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
