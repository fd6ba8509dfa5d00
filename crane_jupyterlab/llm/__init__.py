"""Prediction backends that ask a language model (or replay one's recorded answers).

- `base.Backend`: the interface (`async predict(PredictionRequest) -> Verdict`).
- `litellm_backend.LiteLLMBackend`: any litellm model; n concurrent samples, strict majority vote.
- `replay.ReplayBackend`: the CRANE-LLM paper's recorded answers, for the JunoBench harness.
- `answer` (schema validation and the only repairs allowed), `votes` (the majority rule), `cache`
  (verdict cache), `errors` (typed, key-scrubbed failures), `factory.make_backend(name, **options)`.

Nothing here imports litellm at module import; it is loaded on the first prediction.
"""
