"""The worker's namespace while a pack of the inputs is loaded: the globals that the notebook's functions
rebuilt from their bytecode (`transfer`) and the calls that make a Keras model again (`kerascopy`) run in.
Its own module so that both read one place without importing each other. Stdlib only."""

from __future__ import annotations

from typing import Any

# Set by `transfer.rebuild` before it loads a pack; a one-item list so that readers see the update.
NAMESPACE: list[dict[str, Any]] = [{}]
