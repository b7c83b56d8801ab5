"""shiftbench: seeded, LLM-transformed MTEB datasets and robustness scores for encoders.

The stages are functions; the command line calls the same ones:

    >>> import shiftbench
    >>> run = shiftbench.generate("sample", shiftbench.GenSettings(seeds=(1, 2)))
    >>> checked = shiftbench.validate_runs([run.folder])
    >>> result = shiftbench.score_encoders(run.folder, ["sentence-transformers/all-MiniLM-L6-v2"])
    >>> frame = result.to_dataframe()

Folders left unnamed go under the user's cache ($SHIFTBENCH_CACHE_DIR, else
~/.cache/shiftbench), never into the current folder.

Names are imported when first used, so `import shiftbench` stays light.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("shiftbench")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

# public name -> the module that defines it
_API = {
    "load_source": "shiftbench.core.data.sources",
    "Source": "shiftbench.core.data.sources",
    "GenSettings": "shiftbench.gen.api",
    "GenResult": "shiftbench.gen.api",
    "TooManyFailures": "shiftbench.gen.api",
    "generate": "shiftbench.gen.api",
    "plan_generation": "shiftbench.gen.api",
    "EncoderSettings": "shiftbench.evaluate.api",
    "EvalSettings": "shiftbench.evaluate.api",
    "EvalResult": "shiftbench.evaluate.api",
    "ConfigScore": "shiftbench.evaluate.api",
    "ModelSummary": "shiftbench.evaluate.api",
    "Interval": "shiftbench.evaluate.api",
    "Evaluation": "shiftbench.evaluate.api",
    "score_encoders": "shiftbench.evaluate.api",
    "ProbeRunSettings": "shiftbench.evaluate.api",
    "ProbeResult": "shiftbench.evaluate.api",
    "probe_encoders": "shiftbench.evaluate.api",
    "mteb_tasks": "shiftbench.evaluate.mteb_tasks",
    "JudgeSettings": "shiftbench.validate.api",
    "ValidateSettings": "shiftbench.validate.api",
    "ValidateResult": "shiftbench.validate.api",
    "ConfigValidation": "shiftbench.validate.api",
    "MeasureSummary": "shiftbench.validate.api",
    "TooManyErrors": "shiftbench.validate.api",
    "validate_runs": "shiftbench.validate.api",
    "CalibrateSettings": "shiftbench.validate.api",
    "calibrate_judges": "shiftbench.validate.api",
    "BatchSettings": "shiftbench.human_eval.api",
    "BatchResult": "shiftbench.human_eval.api",
    "ImportResult": "shiftbench.human_eval.api",
    "make_batches": "shiftbench.human_eval.api",
    "export_batches": "shiftbench.human_eval.api",
    "import_ratings": "shiftbench.human_eval.api",
    "report_ratings": "shiftbench.human_eval.api",
    "ReleaseSettings": "shiftbench.cards.api",
    "write_card": "shiftbench.cards.api",
    "publish_release": "shiftbench.cards.api",
    "verify_release": "shiftbench.cards.api",
    "InputError": "shiftbench.errors",
    "RuntimeFault": "shiftbench.errors",
}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(import_module(_API[name]), name)
    raise AttributeError(f"module 'shiftbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
