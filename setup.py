"""Which packages the wheel holds, found rather than listed.

The repository root is the package `shiftbench` (`package-dir` in pyproject.toml), so
setuptools' own discovery, which would name the stage folders `gen`, `validate`, ... as
top-level packages, is run here and its finds are placed under `shiftbench`. A new
folder with an `__init__.py` is in the next wheel without anyone editing a list;
`tests/real/test_package.py` compares the wheel with the tracked tree file for file.
"""

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

NOT_PACKAGED = ["tests", "tests.*", "bench", "bench.*", "docs", "docs.*", "build", "build.*"]


class BuildPackage(build_py):
    """setuptools' build_py, less this script (it sits in the root package's folder)."""

    def find_package_modules(self, package, package_dir):
        found = super().find_package_modules(package, package_dir)
        return [m for m in found if (m[0], m[1]) != ("shiftbench", "setup")]


found = find_packages(exclude=NOT_PACKAGED)
setup(
    packages=["shiftbench", *(f"shiftbench.{name}" for name in found)],
    cmdclass={"build_py": BuildPackage},
)
