"""shiftbench: seeded, LLM-transformed MTEB datasets and robustness scores for encoders."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("shiftbench")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
