"""The prediction backend that asks a language model.

- `base.Backend`: the interface (`async predict(PredictionRequest) -> Verdict`).
- `litellm_backend.LiteLLMBackend`: any litellm model; n concurrent samples, strict majority vote.
- `answer` (schema validation and the only repairs allowed), `votes` (the majority rule), `cache`
  (verdict cache), `errors` (typed, key-scrubbed failures), `factory.make_backend(name, **options)`.

Nothing here imports litellm at module import; it is loaded on the first prediction.
"""

from __future__ import annotations

import os
from typing import Any


def litellm() -> Any:
    """The litellm module, imported on first use (the import takes seconds) and never allowed to fetch
    its model cost map from the network. Every import of litellm in the project goes through here."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm as module

    module.suppress_debug_info = True
    return module
