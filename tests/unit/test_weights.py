"""Where in-process backends read weights from: the dequantised copy of a GGUF file, made
once per file and shared by every process that needs it."""

from __future__ import annotations

import threading
from pathlib import Path

from shiftbench.llm.backends import weights
from shiftbench.llm.backends.weights import (
    MODELS_ENV,
    ModelLocation,
    dequantised_checkpoint,
    models_dir,
)


def test_the_models_folder_is_the_variable_else_the_caches_models(monkeypatch, tmp_path):
    monkeypatch.delenv(MODELS_ENV, raising=False)
    monkeypatch.setenv("SHIFTBENCH_CACHE_DIR", str(tmp_path / "default"))
    assert models_dir() == tmp_path / "default" / "models"
    assert models_dir(tmp_path / "given") == tmp_path / "given" / "models"
    monkeypatch.setenv(MODELS_ENV, str(tmp_path / "shared"))
    assert models_dir(tmp_path / "given") == tmp_path / "shared"


class _Saved:
    """Stands in for a tokenizer or model: save_pretrained writes one file."""

    def __init__(self, name: str) -> None:
        self.name = name

    def save_pretrained(self, folder: Path) -> None:
        (Path(folder) / self.name).write_text(self.name, encoding="utf-8")


def test_processes_that_need_one_copy_at_once_make_it_once(monkeypatch, tmp_path):
    """The first converter holds the lock until the three others are waiting on it; they
    then find its copy, and make none of their own."""
    import fcntl

    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF stand-in")
    location = ModelLocation(str(gguf), str(tmp_path), gguf.name)
    made: list[str] = []
    waiting = threading.Condition()
    asked: list[int] = []  # calls to flock, the first converter's included
    real_flock = fcntl.flock

    def flock(fd, operation):
        with waiting:
            asked.append(operation)
            waiting.notify_all()
        return real_flock(fd, operation)

    def load_gguf(loc):
        made.append(loc.gguf_file)
        with waiting:
            assert waiting.wait_for(lambda: len(asked) == 4, timeout=120), asked
        return _Saved("tokenizer.json"), _Saved("config.json")

    monkeypatch.setattr(fcntl, "flock", flock)
    monkeypatch.setattr(weights, "load_gguf", load_gguf)
    monkeypatch.setattr(weights, "_plain_copy", lambda model: model)
    results: list[Path] = []

    def convert():
        results.append(dequantised_checkpoint(location, tmp_path / "models"))

    threads = [threading.Thread(target=convert) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert made == ["tiny.gguf"] and len(results) == 4
    (copy,) = set(results)
    assert sorted(p.name for p in copy.iterdir()) == ["SOURCE", "config.json", "tokenizer.json"]
    assert location.digest() in (copy / "SOURCE").read_text(encoding="utf-8")
    # nothing half-made is left beside it, only the lock file
    assert sorted(p.name for p in copy.parent.iterdir()) == [f".{copy.name}.lock", copy.name]
