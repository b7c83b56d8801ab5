"""gen: seeded, LLM-transformed variants of a source, written as a run folder."""
