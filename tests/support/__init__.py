"""What the tests run against instead of the outside world: stub servers that speak the
real protocols (OpenAI-compatible, Ollama, the Hugging Face Hub, Argilla), llama.cpp's real
server, scripted backends with known replies, and waiting on events with a deadline."""
