"""The suite's root: thread shares under pytest-xdist, the fixture plugins, and the markers
each test gets from its folder.

Tests live by what they need: `unit/` (no model, no server, no command line), `integration/`
(the command line in-process, the scripted generators, the stub servers on 127.0.0.1),
`real/` (real models, real servers, real datasets scored against mteb, Chromium). Helpers are
in `support/`, fixtures in `fixtures/` (one definition each, loaded as plugins below).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    # Under pytest-xdist the workers share the cores: each gets its share of compute threads
    # (torch, OpenMP, BLAS), and so do the CLI processes and servers its tests start, which
    # inherit this environment. Set before anything imports torch.
    _threads = str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_name, _threads)

pytest_plugins = [
    "fixtures.environment",  # caches of its own for every test, the real data, WordNet
    "fixtures.cli",  # the command line in-process
    "fixtures.backends",  # the scripted generator and judge
    "fixtures.browser",  # headless Chromium
    "fixtures.runs",  # run folders and encoders several modules use
    "fixtures.parity",  # session fixtures of the mteb-parity tests
    "fixtures.cards",
    "fixtures.evaluate",
    "fixtures.hteb",
    "fixtures.human_eval",
    "fixtures.rewrite_parts",
    "fixtures.summarization",
]

FOLDERS = ("unit", "integration", "real")  # each is also the marker of the tests in it


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test gets its folder's marker (`unit`, `integration`, `real`), and for pytest-xdist
    (`pytest -n auto`, with `--dist loadgroup` from pyproject.toml):

    - a test using a module-scoped fixture (a server, a generated run) joins its module's
      group, so one worker builds the fixture once and runs every test
      that uses it, rather than both workers building it;
    - on a worker, the heavy tests run first, then the other real ones, so the long ones
      are spread over both workers and none starts last while the other worker sits idle.
    """
    for item in items:
        folder = Path(item.path).parent.name
        if folder not in FOLDERS:
            raise pytest.UsageError(f"{item.nodeid}: tests live in tests/unit, integration or real")
        item.add_marker(folder)
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        for defs in info.name2fixturedefs.values():
            if defs and defs[-1].scope == "module":
                item.add_marker(pytest.mark.xdist_group(item.module.__name__))
                break
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(
            key=lambda item: (
                item.get_closest_marker("heavy") is None,
                item.get_closest_marker("real") is None,
            )
        )


_UNGROUPED: list[str] = []  # set on a worker where pytest-xdist ignored the groups


def pytest_collection_finish(session: pytest.Session) -> None:
    """Under `--dist loadgroup`, note when pytest-xdist has not grouped the marked tests (it
    puts the group in each test id, and pytest 9.2 ignores the way it does so): then every
    module-scoped fixture is built on both workers and the shared caches of the parity
    tests are split between them. Every test then fails with the way out (`_grouped`)."""
    config = session.config
    if not os.environ.get("PYTEST_XDIST_WORKER") or not config.getvalue("loadgroup"):
        return
    for item in session.items:
        if item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
            _UNGROUPED.append(
                f"pytest-xdist did not put {item.nodeid} in its xdist_group (pytest "
                f"{pytest.__version__}); install the pytest that pyproject.toml's test extra pins"
            )
            return


@pytest.fixture(scope="session", autouse=True)
def _grouped() -> None:
    if _UNGROUPED:
        pytest.fail(_UNGROUPED[0], pytrace=False)
