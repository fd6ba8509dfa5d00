"""JunoBench's recorded runtime information, read back, tagged by category (S, R, V) and filtered.

Each case's `runtime_info` is the `pprint` dump of the CRANE-LLM extractor's summary: one record per
name the target cell uses (`__method__<name>_<attr>` for attributes), each a dict of attributes. This
module parses that dump (including the non-literal reprs that kept 18 cases from being JSON), tags every
fact with a category, keeps the categories asked for, and prints the result back exactly as the
extractor did, so `SRV` reproduces the recorded text byte for byte.

What a fact is: one leaf attribute of a record (`shape`, `dtype`, `has_nan`, one column's `num_unique`,
...). A list value such as a shape is one fact. Record names are not facts (they are what the facts are
about) and are always kept; so is `execution_cell_source` (provenance: which cell made the object).

The mapping, by the attribute's key (the same lines as the probe's S/R/V tags in `kernel/probe/summarize/`):

- S, structure: `shape`, `length`, sample/epoch/batch counts and shapes (`n_samples`, `n_epochs`,
  `batch_size`, `image_shape`, `target_size`, `sample_shapes`, `batch_shapes`, ...), the names of a
  frame's columns (each `per_column` key), the keys of a dict (`metrics` of a training history, each
  `preview` item's `key`), and the fitted widths `fitted_attributes` (`n_features_in_`, `n_outputs_`).
- R, representation and type: `type`, `dtype`, `dtypes`, `module`, `class_name`, `device`,
  `requires_grad`, `element_spec`, `detected` (the kind of object the extractor recognised), a preview
  item's `key_type` / `value_type`, a column's `dtype`.
- V, values: `has_nan`, `value_range`, `value`, `value_info` (value kind, unique values and counts,
  range), `num_classes` / `n_classes`, `class_mode`, `is_fitted`, a preview item's `value_repr`, a
  column's value kind (`type`: continuous / categorical / binary), `num_unique`, `value_range`,
  `unique_values`, `example_values`.

Where this differs from the paper's own split (its `summary_rules.FEATURE_CATEGORIES`): the paper files
column lists, dict keys and `metrics` under values and fitted state under representation; we follow the
product's categories (the brief's S/R/V, and the probe's tags: `columns`/`keys`/`n_features_in_` are S,
`fitted` is V), so that an ablation means the same on JunoBench as on the live suite.

Filtering keeps a fact when its category is chosen. A column (or preview item) stays as a key as long as
any fact about it stays, because a value fact about a column has to name it (the probe's per-column
entries name their column too): so dropping S hides `shape`/`length` and the like but not the names of
columns whose values are shown. A record left without facts stays as an empty dict (the name exists);
the paper dropped such records.
"""

from __future__ import annotations

import ast
import pprint
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

CATEGORIES = "SRV"
PROVENANCE = "execution_cell_source"

# Leaf attributes by key, wherever they appear in a record.
_LEAF: dict[str, str] = {
    # structure
    "shape": "S",
    "length": "S",
    "n_samples": "S",
    "n_examples": "S",
    "n_epochs": "S",
    "num_batches": "S",
    "batch_size": "S",
    "image_shape": "S",
    "target_size": "S",
    "dataset_shape": "S",
    "data_shape": "S",
    "target_shape": "S",
    "samples": "S",
    "num_examples": "S",
    "metrics": "S",
    # representation
    "type": "R",
    "dtype": "R",
    "dtypes": "R",
    "dtypes_summary": "R",
    "module": "R",
    "class_name": "R",
    "device": "R",
    "requires_grad": "R",
    "element_spec": "R",
    "detected": "R",
    "classes_dtype": "R",
    # values
    "has_nan": "V",
    "value_range": "V",
    "value": "V",
    "num_classes": "V",
    "n_classes": "V",
    "class_mode": "V",
    "is_fitted": "V",
    "num_unique": "V",
    "unique_values": "V",
    "example_values": "V",
    "final_values": "V",
}
# Sub-dicts whose every leaf has one category, whatever its own key.
_GROUP: dict[str, str] = {
    "value_info": "V",
    "fitted_attributes": "S",
    "sample_shapes": "S",
    "batch_shapes": "S",
}
# Inside one column of `per_column`: the column's own attributes (`type` there is the value kind).
_COLUMN: dict[str, str] = {"dtype": "R"}
# Inside one item of a dict's `preview`.
_PREVIEW: dict[str, str] = {"key": "S", "key_type": "R", "value_type": "R", "value_repr": "V"}


class Opaque:
    """A repr in the dump that is not a Python literal (`torch.Size([3])`, `<X object at 0x..>`, `nan`).

    Kept as its text, and printed back as that text, so a filtered dump reads like the original.
    """

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def _mask_angle_reprs(text: str) -> tuple[str, dict[str, str]]:
    """Replace every `<...>` outside a string literal by a placeholder name (they do not parse)."""
    out: list[str] = []
    masked: dict[str, str] = {}
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "'\"":
            j = _string_end(text, i)
            out.append(text[i:j])
            i = j
        elif ch == "<":
            depth, j = 0, i
            while j < n:
                if text[j] in "'\"":
                    j = _string_end(text, j)
                    continue
                if text[j] == "<":
                    depth += 1
                elif text[j] == ">":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            name = f"__crane_opaque_{len(masked)}__"
            masked[name] = text[i : j + 1]
            out.append(name)
            i = j + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out), masked


def _string_end(text: str, start: int) -> int:
    """Index just past the string literal opening at `start` (single-line, backslash escapes)."""
    quote = text[start]
    j = start + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == quote:
            return j + 1
        j += 1
    return len(text)


def _value(node: ast.expr, source: str, masked: dict[str, str]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Dict):
        return {
            _value(k, source, masked) if k is not None else None: _value(v, source, masked)
            for k, v in zip(node.keys, node.values, strict=True)
        }
    if isinstance(node, ast.List):
        return [_value(e, source, masked) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_value(e, source, masked) for e in node.elts)
    if isinstance(node, ast.Set):
        return {_value(e, source, masked) for e in node.elts}
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
    ):
        return -node.operand.value
    text = ast.get_source_segment(source, node) or ""
    for name, original in masked.items():
        text = text.replace(name, original)
    return Opaque(text)


def parse_runtime_info(text: str) -> dict[str, Any]:
    """The extractor's dump as Python values; what is not a literal becomes an `Opaque`.

    Raises ValueError when the text is not a dict display at all.
    """
    masked_text, masked = _mask_angle_reprs(text)
    try:
        tree = ast.parse(masked_text, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"runtime information does not parse: {exc.msg} (line {exc.lineno})") from None
    value = _value(tree.body, masked_text, masked)
    if not isinstance(value, dict):
        raise ValueError("runtime information is not a dict of records")
    return value


def render(record: dict[str, Any]) -> str:
    """The dump as the extractor printed it (`pprint`, sorted keys, 80 columns)."""
    return pprint.pformat(record)


@dataclass(frozen=True)
class Fact:
    name: str  # the record: a name the target cell uses, or `__method__<name>_<attr>`
    path: tuple[str, ...]  # keys from the record down to the leaf
    category: str  # "S", "R" or "V"
    known: bool = True  # False: an attribute the mapping does not name, filed under V


_Leaf = tuple[tuple[str, ...], str, bool]


def _walk(value: dict[str, Any], path: tuple[str, ...], context: str) -> Iterator[_Leaf]:
    """(path, category, known) of every leaf under a record-like dict; `context` says how to read keys."""
    for key, item in value.items():
        key_s = str(key)
        here = (*path, key_s)
        if context == "record" and key_s == PROVENANCE:
            continue
        if context == "column":
            yield from _leaves(item, here, _COLUMN.get(key_s, "V"))
        elif context == "preview":
            yield from _leaves(item, here, _PREVIEW.get(key_s) or _LEAF.get(key_s, "V"))
        elif key_s in _GROUP:
            yield from _leaves(item, here, _GROUP[key_s])
        elif key_s == "per_column" and isinstance(item, dict):
            for column, stats in item.items():
                col_path = (*here, str(column))
                yield col_path, "S", True  # the column exists: one entry of the column list
                if isinstance(stats, dict):
                    yield from _walk(stats, col_path, "column")
        elif key_s == "preview" and isinstance(item, list):
            for index, entry in enumerate(item):
                if isinstance(entry, dict):
                    yield from _walk(entry, (*here, str(index)), "preview")
                else:
                    yield (*here, str(index)), "V", True
        elif key_s in _LEAF:
            yield from _leaves(item, here, _LEAF[key_s])
        elif isinstance(item, dict):
            # A nested record (a DataLoader's `dataset`, `dataset_info` entries): read like a record.
            yield from _walk(item, here, "record")
        else:
            # An attribute this table does not know: filed under values, and marked.
            yield here, "V", False


def _leaves(value: Any, path: tuple[str, ...], category: str) -> Iterator[_Leaf]:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _leaves(item, (*path, str(key)), category)
    else:
        yield path, category, True


def facts(runtime: dict[str, Any] | None) -> list[Fact]:
    """Every fact of a case's runtime information, in record order."""
    out: list[Fact] = []
    for name, record in (runtime or {}).items():
        if isinstance(record, dict):
            out.extend(Fact(str(name), path, cat, known) for path, cat, known in _walk(record, (), "record"))
    return out


def count(runtimes: Iterable[dict[str, Any] | None]) -> Counter[str]:
    """Facts per category over many cases."""
    tally: Counter[str] = Counter()
    for runtime in runtimes:
        tally.update(f.category for f in facts(runtime))
    return tally


def check_categories(categories: str) -> str:
    """`categories` as a canonical subset of SRV ("VS" -> "SV"); ValueError for anything else."""
    if not isinstance(categories, str) or set(categories) - set(CATEGORIES):
        raise ValueError(f"categories must be a subset of S, R, V (e.g. SR); got {categories!r}")
    return "".join(c for c in CATEGORIES if c in categories)


def filter_runtime(runtime: dict[str, Any], categories: str) -> dict[str, Any]:
    """A copy of `runtime` holding only the facts of `categories` (see the module docstring)."""
    keep = set(check_categories(categories))
    kept: set[tuple[str, tuple[str, ...]]] = set()
    above: set[tuple[str, tuple[str, ...]]] = set()  # every path that leads to a kept fact
    for fact in facts(runtime):
        if fact.category in keep:
            kept.add((fact.name, fact.path))
            above.update((fact.name, fact.path[:i]) for i in range(1, len(fact.path)))
    out: dict[str, Any] = {}
    for name, record in runtime.items():
        out[name] = _prune(record, str(name), (), kept, above) if isinstance(record, dict) else record
    return out


_Paths = set[tuple[str, tuple[str, ...]]]


def _prune(value: Any, name: str, path: tuple[str, ...], kept: _Paths, above: _Paths) -> Any:
    if isinstance(value, list):
        items = [(i, v) for i, v in enumerate(value) if (name, (*path, str(i))) in kept | above]
        return [_prune(v, name, (*path, str(i)), kept, above) for i, v in items]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        here = (*path, str(key))
        if not path and key == PROVENANCE:
            out[key] = item
        elif (name, here) in above:
            # Facts below: keep what they keep (a column stays while any fact about it does).
            out[key] = _prune(item, name, here, kept, above)
        elif (name, here) in kept:
            # A non-empty dict is a fact itself only as a column of `per_column`: its name, no stats.
            out[key] = _prune(item, name, here, kept, above) if isinstance(item, dict) else item
    return out


def case_runtime(case: dict[str, Any]) -> dict[str, Any] | None:
    """The case's runtime information parsed from its dump (None when it has none)."""
    text = case.get("runtime_info")
    if not isinstance(text, str) or not text.strip():
        return None
    return parse_runtime_info(text)
