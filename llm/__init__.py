"""The LLM layer gen and validate share: backends, the generation cache, calls with
retries, and log-probabilities. It imports only the core modules, never a stage."""
