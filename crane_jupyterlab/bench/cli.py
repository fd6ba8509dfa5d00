"""`crane-bench`: how crane-jupyterlab measures itself.

Each sub-command lives in its own module of this package and exposes
`register(subparsers) -> None`, which adds its parser and sets `func` (called with the parsed
arguments, returns the exit code).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import chain, forecast, junobench, live, notebooks, serverspeed, speed, verify

# Sub-command modules, in the order `--help` lists them; each has `register(subparsers)`.
SUBCOMMANDS = (live, verify, notebooks, chain, junobench, speed, serverspeed, forecast)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crane-bench",
        description=(
            "Benchmarks of crane-jupyterlab: the live crash suite (and verifying a suite's cases), real"
            " notebooks, edits of early cells and the cells below (the chain), JunoBench, and speed."
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
