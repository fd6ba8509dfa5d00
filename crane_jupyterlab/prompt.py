"""The CRANE prompt: executed cells + runtime information (+ API docs) + target cell -> chat messages.

The system message states the task and the output contract; the user message carries, in order, the
executed cells (numbered, execution order), the runtime block, the +D API docs and the target cell.
Long histories are trimmed from the oldest cell on to fit a token budget; the target cell and the
runtime block are never cut (they are what the prediction is about).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .llm import litellm
from .models import PredictionRequest

Message = dict[str, str]

SYSTEM_PROMPT = """\
You check code in a Python machine-learning notebook BEFORE it runs. You get the cells that have \
already run (in execution order), sometimes runtime information about the objects that live in the \
kernel right now, sometimes API documentation, and one target cell that has not run yet. Decide whether \
running the target cell next, in exactly this kernel state, will raise an exception.

Reply with exactly one JSON object and nothing else, no code fence:
{"reasoning": "<one or two sentences>", "detection": <true or false>}

Rules:
- "reasoning": one or two sentences. If it crashes, name the statement and the error; otherwise say \
why it runs.
- "detection": true only when you are certain the target cell raises an exception; false when it runs, \
only warns, gives a wrong result, or when you are unsure.
- Runtime information, when given, describes the kernel just before the target cell runs; where it \
disagrees with what the code suggests, trust it."""

CATEGORY_NAMES = {"S": "structure", "R": "types and representation", "V": "values"}
OMITTED_MARKER = "# … {n} earlier cells omitted …"
DEFAULT_TOKEN_MODEL = "gpt-4o"


@dataclass(frozen=True)
class PromptSettings:
    """How a prompt is built.

    runtime: include the runtime block (False = the -RT baseline, whatever the request carries).
    categories: the S/R/V categories the runtime block shows (its heading says which).
    docs: include the +D API docs when the request carries them.
    max_prompt_tokens: budget for the whole prompt; only executed cells are dropped to meet it.
    token_model: the model whose tokenizer counts tokens (litellm falls back to tiktoken).
    """

    runtime: bool = True
    categories: str = "SRV"
    docs: bool = True
    max_prompt_tokens: int = 12_000
    token_model: str = DEFAULT_TOKEN_MODEL

    def __post_init__(self) -> None:
        bad = set(self.categories) - set("SRV")
        if bad:
            raise ValueError(f"categories must be a subset of 'SRV', got {self.categories!r}")
        if self.max_prompt_tokens < 1:
            raise ValueError(f"max_prompt_tokens must be positive, got {self.max_prompt_tokens}")

    def cache_key(self) -> dict[str, Any]:
        return {
            "runtime": self.runtime,
            "categories": "".join(sorted(self.categories)),
            "docs": self.docs,
            "max_prompt_tokens": self.max_prompt_tokens,
        }


@dataclass
class BuiltPrompt:
    messages: list[Message]
    prompt_tokens: int
    cells_total: int
    cells_omitted: int = 0
    has_runtime: bool = False
    has_docs: bool = False
    sections: list[str] = field(default_factory=list)


def count_tokens(text: str, model: str = DEFAULT_TOKEN_MODEL) -> int:
    """Tokens of `text` under `model`'s tokenizer (litellm falls back to tiktoken for unknown models)."""
    if not text:
        return 0
    # litellm is imported late: it takes seconds, and most importers only want the text.
    return int(litellm().token_counter(model=model, text=text))


def count_message_tokens(messages: Sequence[Message], model: str = DEFAULT_TOKEN_MODEL) -> int:
    """Tokens of a chat prompt, including litellm's per-message overhead."""
    return int(litellm().token_counter(model=model, messages=list(messages)))


def _fence(code: str) -> str:
    # A longer fence than any run of backticks in the code keeps the block unambiguous.
    longest = 0
    run = 0
    for ch in code:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}python\n{code.strip(chr(10))}\n{ticks}"


def _cell_block(number: int, code: str) -> str:
    return f"[{number}]\n{_fence(code)}"


def _runtime_text(request: PredictionRequest, settings: PromptSettings) -> str | None:
    if not settings.runtime or not settings.categories:
        return None
    if request.runtime_text is not None:
        return request.runtime_text.strip() or None
    # A structured probe result without pre-rendered text: render it for the chosen categories.
    if request.runtime is not None and request.runtime_format == "probe":
        try:
            from .runtime_text import render
        except ImportError:  # the renderer is optional for the prompt's own tests
            return None
        text = render(request.runtime, settings.categories)
        return text.strip() or None
    return None


def _runtime_heading(categories: str) -> str:
    shown = [CATEGORY_NAMES[c] for c in "SRV" if c in categories]
    return "Runtime information (" + ", ".join(shown) + ") just before the target cell runs:"


def _fit_cells(cells: Sequence[str], budget: int, model: str) -> tuple[list[str], int]:
    """Newest cells that fit in `budget` tokens, as numbered blocks, and how many older ones were dropped."""
    kept: list[str] = []
    used = 0
    for index in range(len(cells) - 1, -1, -1):
        block = _cell_block(index + 1, cells[index])
        cost = count_tokens(block, model) + 2
        if used + cost > budget:
            break
        kept.append(block)
        used += cost
    kept.reverse()
    omitted = len(cells) - len(kept)
    if omitted:
        kept.insert(0, OMITTED_MARKER.format(n=omitted))
    return kept, omitted


def build_prompt(request: PredictionRequest, settings: PromptSettings | None = None) -> BuiltPrompt:
    """Build the chat messages for `request`, trimmed to the settings' token budget."""
    settings = settings or PromptSettings()
    model = settings.token_model
    runtime = _runtime_text(request, settings)
    docs = request.docs_text.strip() if settings.docs and request.docs_text else None

    tail: list[str] = []
    if runtime:
        tail.append(_runtime_heading(settings.categories) + "\n" + runtime)
    if docs:
        tail.append("API documentation of the calls in the target cell:\n" + docs)
    tail.append("Target cell (not run yet):\n" + _fence(request.target_cell))
    tail.append("Will running the target cell raise an exception? Answer with the JSON object only.")

    cells = request.executed_cells
    head = "Executed cells, in execution order:" if cells else "No cells have run yet in this kernel."
    fixed_text = "\n\n".join([head, *tail])
    # The marker line is budgeted up front so trimming can never push the prompt over.
    fixed = count_message_tokens(
        [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": fixed_text}], model
    ) + count_tokens(OMITTED_MARKER.format(n=len(cells)), model)
    blocks, omitted = _fit_cells(cells, settings.max_prompt_tokens - fixed, model)

    user = "\n\n".join([head, *blocks, *tail]) if cells else fixed_text
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]
    return BuiltPrompt(
        messages=messages,
        prompt_tokens=count_message_tokens(messages, model),
        cells_total=len(cells),
        cells_omitted=omitted,
        has_runtime=runtime is not None,
        has_docs=docs is not None,
    )


def build_messages(request: PredictionRequest, settings: PromptSettings | None = None) -> list[Message]:
    """The chat messages for `request` (see `build_prompt` for the token count and trimming facts)."""
    return build_prompt(request, settings).messages


def _doc_line(label: str, value: Any) -> str | None:
    if value is None or value == "" or value == [] or value == {}:
        return None
    if isinstance(value, Mapping):
        text = ", ".join(f"{k}={v}" for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        text = ", ".join(str(v) for v in value)
    else:
        text = " ".join(str(value).split())
    if len(text) > 400:
        text = text[:399] + "…"
    return f"  {label}: {text}"


def render_docs(docs: Sequence[Mapping[str, Any]]) -> str:
    """Render the probe's +D `Doc` entries as the prompt's API-documentation block.

    One entry per call: `call -> qualname signature`, then required / optional (with defaults) /
    keyword-only parameters and the Notes/Warnings excerpts. Entries without a call or name are skipped.
    """
    parts: list[str] = []
    for doc in docs:
        if not isinstance(doc, Mapping):
            continue
        call = str(doc.get("call") or doc.get("qualname") or "").strip()
        if not call:
            continue
        qualname = str(doc.get("qualname") or "").strip()
        signature = str(doc.get("signature") or "").strip()
        title = call
        if qualname and qualname != call:
            title += f" -> {qualname}"
        title += signature
        lines = [title]
        for label, key in (
            ("required", "required"),
            ("optional (defaults)", "optional"),
            ("keyword-only", "kwonly"),
            ("notes", "notes"),
            ("warnings", "warnings"),
        ):
            line = _doc_line(label, doc.get(key))
            if line:
                lines.append(line)
        parts.append("\n".join(lines))
    return "\n\n".join(parts)
