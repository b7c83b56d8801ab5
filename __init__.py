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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # what `__getattr__` serves, seen by type checkers and editors (`py.typed` marks the
    # package typed): a user's mypy gets each name's real signature, while `import
    # shiftbench` at run time still loads none of the stages. `X as X` re-exports X under
    # mypy --strict too; isort would write each such import as a statement of its own.
    # isort: off
    from shiftbench.cards.api import (
        publish_release as publish_release,
        verify_release as verify_release,
        write_card as write_card,
    )
    from shiftbench.cards.settings import (
        ReleaseSettings as ReleaseSettings,
    )
    from shiftbench.core.data.sources import (
        Source as Source,
        load_source as load_source,
    )
    from shiftbench.errors import (
        InputError as InputError,
        RuntimeFault as RuntimeFault,
    )
    from shiftbench.evaluate.api import (
        ConfigScore as ConfigScore,
        EvalResult as EvalResult,
        Evaluation as Evaluation,
        Interval as Interval,
        ModelSummary as ModelSummary,
        ProbeResult as ProbeResult,
        probe_encoders as probe_encoders,
        score_encoders as score_encoders,
    )
    from shiftbench.evaluate.settings import (
        EncoderSettings as EncoderSettings,
        EvalSettings as EvalSettings,
        ProbeRunSettings as ProbeRunSettings,
    )
    from shiftbench.evaluate.mteb_tasks import (
        mteb_tasks as mteb_tasks,
    )
    from shiftbench.gen.api import (
        GenResult as GenResult,
        TooManyFailures as TooManyFailures,
        generate as generate,
        plan_generation as plan_generation,
    )
    from shiftbench.gen.settings import (
        GenSettings as GenSettings,
    )
    from shiftbench.human_eval.api import (
        BatchResult as BatchResult,
        ImportResult as ImportResult,
        export_batches as export_batches,
        import_ratings as import_ratings,
        make_batches as make_batches,
        report_ratings as report_ratings,
    )
    from shiftbench.human_eval.settings import (
        BatchSettings as BatchSettings,
        ExportSettings as ExportSettings,
    )
    from shiftbench.validate.api import (
        ConfigValidation as ConfigValidation,
        MeasureSummary as MeasureSummary,
        TooManyErrors as TooManyErrors,
        ValidateResult as ValidateResult,
        calibrate_judges as calibrate_judges,
        validate_runs as validate_runs,
    )
    from shiftbench.validate.settings import (
        CalibrateSettings as CalibrateSettings,
        JudgeSettings as JudgeSettings,
        ValidateSettings as ValidateSettings,
    )
    # isort: on

try:
    __version__ = version("shiftbench")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

# public name -> the module that defines it
_API = {
    "load_source": "shiftbench.core.data.sources",
    "Source": "shiftbench.core.data.sources",
    "GenSettings": "shiftbench.gen.settings",
    "GenResult": "shiftbench.gen.api",
    "TooManyFailures": "shiftbench.gen.api",
    "generate": "shiftbench.gen.api",
    "plan_generation": "shiftbench.gen.api",
    "EncoderSettings": "shiftbench.evaluate.settings",
    "EvalSettings": "shiftbench.evaluate.settings",
    "EvalResult": "shiftbench.evaluate.api",
    "ConfigScore": "shiftbench.evaluate.api",
    "ModelSummary": "shiftbench.evaluate.api",
    "Interval": "shiftbench.evaluate.api",
    "Evaluation": "shiftbench.evaluate.api",
    "score_encoders": "shiftbench.evaluate.api",
    "ProbeRunSettings": "shiftbench.evaluate.settings",
    "ProbeResult": "shiftbench.evaluate.api",
    "probe_encoders": "shiftbench.evaluate.api",
    "mteb_tasks": "shiftbench.evaluate.mteb_tasks",
    "JudgeSettings": "shiftbench.validate.settings",
    "ValidateSettings": "shiftbench.validate.settings",
    "ValidateResult": "shiftbench.validate.api",
    "ConfigValidation": "shiftbench.validate.api",
    "MeasureSummary": "shiftbench.validate.api",
    "TooManyErrors": "shiftbench.validate.api",
    "validate_runs": "shiftbench.validate.api",
    "CalibrateSettings": "shiftbench.validate.settings",
    "calibrate_judges": "shiftbench.validate.api",
    "BatchSettings": "shiftbench.human_eval.settings",
    "ExportSettings": "shiftbench.human_eval.settings",
    "BatchResult": "shiftbench.human_eval.api",
    "ImportResult": "shiftbench.human_eval.api",
    "make_batches": "shiftbench.human_eval.api",
    "export_batches": "shiftbench.human_eval.api",
    "import_ratings": "shiftbench.human_eval.api",
    "report_ratings": "shiftbench.human_eval.api",
    "ReleaseSettings": "shiftbench.cards.settings",
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
