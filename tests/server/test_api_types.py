"""src/contract/api.ts, the REST types of the frontend, is generated from crane_jupyterlab/api.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Literal

import pytest
from pydantic import BaseModel, Field

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("crane_api_types", ROOT / "scripts" / "api_types.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


api_types = _generator()


def test_src_api_ts_matches_the_pydantic_models() -> None:
    expected = api_types.generate()
    actual = (ROOT / "src" / "contract" / "api.ts").read_text(encoding="utf-8")
    assert actual == expected, "src/contract/api.ts is out of date: run `python scripts/api_types.py`"


def test_check_mode_fails_on_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "src" / "contract" / "api.ts"
    stale.parent.mkdir(parents=True)
    stale.write_text("export interface IOld {}\n", encoding="utf-8")
    monkeypatch.setattr(api_types, "ROOT", tmp_path)
    monkeypatch.setattr(api_types, "TARGET", stale)
    assert api_types.main(["--check"]) == 1
    assert api_types.main([]) == 0  # rewrites it
    assert api_types.main(["--check"]) == 0


class _Leaf(BaseModel):
    """A leaf."""

    n: int


class _Request(BaseModel):
    """A request.

    Second paragraph.
    """

    name: str
    note: str | None = None
    tags: list[str] = Field(default_factory=list)
    mode: Literal["off", "on-demand"] = "off"
    leaves: list[_Leaf | None] = Field(default_factory=list)
    extra: dict[str, object] | None = None
    status: Literal["crashed", "finished", "blocked", "timed_out", "out_of_memory", "unavailable"] = "crashed"


def test_request_fields_with_defaults_are_optional_and_reply_fields_all_present() -> None:
    request = api_types.render([(_Request, "validation")])
    assert "export interface I_Request {" in request
    assert "  name: string;\n" in request
    assert "  note?: string | null;\n" in request
    assert "  tags?: string[];\n" in request
    assert "  mode?: 'off' | 'on-demand';\n" in request
    assert "  leaves?: (I_Leaf | null)[];\n" in request
    assert "  extra?: { [key: string]: unknown } | null;\n" in request
    # a union wider than prettier's 80 columns is laid out one member per line, as prettier does
    assert "  status?:\n    | 'crashed'\n    | 'finished'\n" in request
    assert "    | 'unavailable';\n" in request
    # docstrings become TSDoc, referenced models follow
    assert "/**\n * A request.\n *\n * Second paragraph.\n */" in request
    assert request.index("I_Request") < request.index("export interface I_Leaf")

    reply = api_types.render([(_Request, "serialization")])
    assert "  note: string | null;\n" in reply
    assert "  tags: string[];\n" in reply
