"""Reading probe results in tests: run the probe in-process and pick entries and facts out of the result."""

from __future__ import annotations

import json
from typing import Any

from crane_jupyterlab.kernel import probe


def run(source: str, ns: dict[str, Any], **options: Any) -> dict[str, Any]:
    result = probe.run(source, options, ns)
    json.dumps(result, allow_nan=False)  # every result must be plain JSON
    assert result["error"] is None, result["error"]
    return result


def entry(result: dict[str, Any], expr: str) -> dict[str, Any]:
    for e in result["objects"]:
        if e["expr"] == expr:
            return e
    raise AssertionError(f"no entry {expr!r} in {[e['expr'] for e in result['objects']]}")


def facts(e: dict[str, Any]) -> dict[str, Any]:
    return {f["key"]: f["value"] for f in e["facts"]}


def exprs(result: dict[str, Any]) -> list[str]:
    return [e["expr"] for e in result["objects"]]


def child(e: dict[str, Any], expr: str) -> dict[str, Any]:
    for c in e["children"]:
        if c["expr"] == expr:
            return c
    raise AssertionError(f"no child {expr!r} in {[c['expr'] for c in e['children']]}")
