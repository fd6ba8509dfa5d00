"""Verdict cache, so the same question to the same model is paid for once.

Keyed by a hash of (messages, model, sampling settings): an in-memory LRU, plus an optional directory
of one JSON file per key that survives restarts (the benchmarks re-run the same prompts). A verdict
read back is marked `cached=True` with latency 0. Unreadable cache files are ignored and overwritten,
never fatal.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..models import Verdict


def cache_key(messages: list[dict[str, str]], model: str, settings: dict[str, Any]) -> str:
    """A stable hex digest of everything that decides the answer."""
    blob = json.dumps(
        {"messages": messages, "model": model, "settings": settings},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class VerdictCache:
    """LRU of verdicts in memory (`size` entries; 0 disables it) with an optional on-disk mirror."""

    def __init__(self, size: int = 256, directory: str | os.PathLike[str] | None = None):
        if size < 0:
            raise ValueError(f"cache size must be >= 0, got {size}")
        self.size = size
        self.directory = Path(directory) if directory is not None else None
        self._memory: OrderedDict[str, str] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path | None:
        return self.directory / f"{key}.json" if self.directory is not None else None

    def get(self, key: str) -> Verdict | None:
        raw = self._memory.get(key)
        if raw is not None:
            self._memory.move_to_end(key)
        else:
            path = self._path(key)
            if path is not None and path.is_file():
                with contextlib.suppress(OSError, UnicodeDecodeError):
                    raw = path.read_text(encoding="utf-8")
        if raw is None:
            self.misses += 1
            return None
        try:
            verdict = Verdict.model_validate_json(raw)
        except ValidationError:
            self.misses += 1
            return None
        self._remember(key, raw)
        self.hits += 1
        return verdict.model_copy(update={"cached": True, "latency_ms": 0.0})

    def put(self, key: str, verdict: Verdict) -> None:
        raw = verdict.model_copy(update={"cached": False}).model_dump_json()
        self._remember(key, raw)
        path = self._path(key)
        if path is None:
            return
        # Write-then-rename so a crash mid-write never leaves a half file another run would read.
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(raw)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def _remember(self, key: str, raw: str) -> None:
        if self.size == 0:
            return
        self._memory[key] = raw
        self._memory.move_to_end(key)
        while len(self._memory) > self.size:
            self._memory.popitem(last=False)

    def __len__(self) -> int:
        return len(self._memory)
