"""Encoders: sentence-transformers models run here (with their embedding cache),
OpenAI-compatible embeddings endpoints, and mteb's model metadata."""
