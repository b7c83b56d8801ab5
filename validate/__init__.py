"""validate: automatic error checks and LLM judges for a run folder."""
