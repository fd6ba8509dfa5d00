"""Generate src/contract/api.ts, the frontend REST types, from the pydantic models of crane_jupyterlab/api.py.

    python scripts/api_types.py           # rewrite src/contract/api.ts
    python scripts/api_types.py --check   # exit 1 when src/contract/api.ts is out of date

The wire format has one source, api.py; this turns its JSON schema into TypeScript interfaces. Request
bodies are read in pydantic's validation mode (a field with a default may be left out: `name?:`), reply
bodies in serialization mode, where every field is present because the handlers send
`model_dump_json()`. StatusReply is sent with `exclude_none`, so it is read like a request. The output
is already in the project's prettier style, so `jlpm lint:check` accepts it as written.
tests/server/test_api_types.py fails when the file and the models disagree.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, models_json_schema

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "src" / "contract" / "api.ts"
WIDTH = 80  # prettier's printWidth

Schema = dict[str, Any]


class _AllPresent(GenerateJsonSchema):
    """Serialization mode: a field with a default is still always in the output, so it is required."""

    def field_is_required(self, field: Any, total: bool) -> bool:
        if self.mode == "serialization":
            return not field.get("serialization_exclude")
        return super().field_is_required(field, total)


def _models() -> list[tuple[type[BaseModel], JsonSchemaMode]]:
    sys.path.insert(0, str(ROOT))
    from crane_jupyterlab.api import (
        AnalyzeRequest,
        AnalyzeResult,
        ConfigReply,
        NotebookRequest,
        NotebookRun,
        StatusReply,
    )

    return [
        (AnalyzeRequest, "validation"),
        (AnalyzeResult, "serialization"),
        (StatusReply, "validation"),  # sent with exclude_none: absent rather than null
        (ConfigReply, "serialization"),
        (NotebookRequest, "validation"),
        (NotebookRun, "serialization"),
    ]


def _name(ref: str) -> str:
    name = ref.rsplit("/", 1)[-1]
    if "-" in name:
        # pydantic splits a model used as both request and reply ("Verdict-Input"); say so plainly.
        raise ValueError(f"{name}: a model used in both a request and a reply needs a rule here")
    return "I" + name


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    raise ValueError(f"unsupported literal {value!r}")


def _members(schema: Schema) -> list[str]:
    """The schema as the members of a TypeScript union (one member for a non-union)."""
    if "$ref" in schema:
        return [_name(schema["$ref"])]
    if "anyOf" in schema:
        out: list[str] = []
        for option in schema["anyOf"]:
            out += [m for m in _members(option) if m not in out]
        return out
    if "const" in schema:
        return [_literal(schema["const"])]
    if "enum" in schema:
        return [_literal(v) for v in schema["enum"]]
    kind = schema.get("type")
    if kind == "string":
        return ["string"]
    if kind in ("integer", "number"):
        return ["number"]
    if kind == "boolean":
        return ["boolean"]
    if kind == "null":
        return ["null"]
    if kind == "array":
        items = _members(schema.get("items", {}))
        return [(f"({' | '.join(items)})" if len(items) > 1 else items[0]) + "[]"]
    if kind == "object" and "properties" not in schema:
        extra = schema.get("additionalProperties", True)
        value = "unknown" if extra is True else " | ".join(_members(extra))
        return [f"{{ [key: string]: {value} }}"]
    if schema == {}:
        return ["unknown"]
    raise ValueError(f"unsupported schema construct: {schema}")


def _doc(text: str | None, indent: str) -> list[str]:
    if not text:
        return []
    lines = [line.rstrip() for line in text.strip().splitlines()]
    if len(lines) == 1:
        return [f"{indent}/** {lines[0]} */"]
    return [f"{indent}/**", *[f"{indent} * {line}".rstrip() for line in lines], f"{indent} */"]


def _property(name: str, optional: bool, members: list[str]) -> list[str]:
    head = f"  {name}{'?' if optional else ''}:"
    flat = f"{head} {' | '.join(members)};"
    if len(flat) <= WIDTH or len(members) == 1:
        return [flat]
    # prettier's layout of a union that does not fit on one line: on the next line where it fits there,
    # else one member a line
    below = f"    {' | '.join(members)};"
    if len(below) <= WIDTH:
        return [head, below]
    return [head, *[f"    | {m}" for m in members[:-1]], f"    | {members[-1]};"]


def _interface(name: str, schema: Schema) -> list[str]:
    if schema.get("type") != "object" or "properties" not in schema:
        raise ValueError(f"{name}: only object models are supported")
    required = set(schema.get("required", []))
    lines = [*_doc(schema.get("description"), ""), f"export interface {name} {{"]
    for prop, spec in schema["properties"].items():
        lines += _doc(spec.get("description"), "  ")
        lines += _property(prop, prop not in required, _members(spec))
    lines.append("}")
    return lines


def _order(defs: dict[str, Schema], roots: list[str]) -> list[str]:
    """The roots in their order, then each model they reference, in order of first reference."""
    seen: list[str] = []

    def refs(node: Any) -> list[str]:
        if isinstance(node, dict):
            found = [node["$ref"].rsplit("/", 1)[-1]] if "$ref" in node else []
            for value in node.values():
                found += refs(value)
            return found
        if isinstance(node, list):
            return [r for item in node for r in refs(item)]
        return []

    queue = list(roots)
    while queue:
        name = queue.pop(0)
        if name not in seen:
            seen.append(name)
            queue += refs(defs[name])
    return seen


def render(models: list[tuple[type[BaseModel], JsonSchemaMode]]) -> str:
    """TypeScript interfaces for `models` and every model they reference."""
    _, schema = models_json_schema(models, schema_generator=_AllPresent)
    defs: dict[str, Schema] = schema.get("$defs", {})
    out = [
        "/*",
        " * The REST contract of /crane/*, GENERATED from crane_jupyterlab/api.py by scripts/api_types.py.",
        " * Do not edit: change the pydantic models, then run `python scripts/api_types.py`.",
        " */",
    ]
    for name in _order(defs, [model.__name__ for model, _ in models]):
        out += ["", *_interface(_name(name), defs[name])]
    return "\n".join(out) + "\n"


def generate() -> str:
    """src/contract/api.ts as it should be."""
    return render(_models())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail when src/contract/api.ts is out of date")
    args = parser.parse_args(argv)
    text = generate()
    current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
    if args.check:
        if current != text:
            print(
                f"{TARGET.relative_to(ROOT)} is out of date: run python scripts/api_types.py", file=sys.stderr
            )
            return 1
        return 0
    if current != text:
        TARGET.write_text(text, encoding="utf-8")
        print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
