"""gen beyond one machine: Ray Data maps gen's stage function over a Ray cluster, a shard a task.

Each shard is one row of a Ray dataset; Ray schedules the rows on its workers with the
resources asked for, retries a task whose worker dies, and returns each shard's outcome.
A shard writes its own run folder (resumable like any gen run: the generation cache
lives wherever the worker's SHIFTBENCH_CACHE_DIR points), and `merge_shards` puts the
shards together into the run folder a single process would have written, byte for byte.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from shiftbench.core.data.sources import SourceArguments, load_source
from shiftbench.errors import InputError, RuntimeFault, ShiftbenchError
from shiftbench.gen.api import generate
from shiftbench.gen.merge import merge_shards

if TYPE_CHECKING:
    from shiftbench.gen.api import GenSettings

ENV_PREFIXES = ("SHIFTBENCH_", "HF_", "XDG_CACHE_HOME", "OPENAI_", "OLLAMA_")


class ScaleSection(TypedDict):
    """A spec's `scale:` section: where gen runs."""

    runner: Literal["local", "ray"]
    shards: int
    ray_address: str | None
    cpus_per_shard: float
    gpus_per_shard: float


def gen_shard(row: dict[str, Any]) -> dict[str, Any]:
    """One shard, on a Ray worker: gen with shard I/N into its own folder."""

    # the settings travel pickled and the source's arguments as JSON, so Ray's tables
    # need not know their types
    settings = pickle.loads(row["settings"])
    settings = replace(settings, shard=(row["index"], row["count"]), output=Path(row["output"]))
    try:
        generate(load_source(**json.loads(row["source"])), settings)
    except ShiftbenchError as exc:
        return {"index": row["index"], "error": str(exc), "bad_input": exc.exit_code == 2}
    return {"index": row["index"], "error": "", "bad_input": False}


def gen_on_ray(
    source: SourceArguments,
    settings: GenSettings,
    shards_dir: Path,
    run: Path,
    scale: ScaleSection,
) -> str:
    """Generate one source's variants as `scale["shards"]` Ray tasks, then merge into `run`.
    `source` holds `load_source`'s arguments; every shard uses `settings`. Returns the
    line to print."""
    try:
        import ray
        import ray.data
    except ImportError:
        raise InputError("scale.runner ray needs Ray Data: pip install 'shiftbench[ray]'") from None

    count = int(scale["shards"])
    started = not ray.is_initialized()
    if started:
        # the workers see the caches and offline settings of this process
        passed = {
            k: v for k, v in os.environ.items()
            if k.startswith(ENV_PREFIXES) and not any(s in k for s in ("TOKEN", "KEY"))
        }  # fmt: skip
        ray.init(
            address=scale["ray_address"], include_dashboard=False, log_to_driver=False,
            runtime_env={"env_vars": passed},
        )  # fmt: skip
    try:
        return _map_shards(ray, source, settings, shards_dir, run, scale, count)
    finally:
        if started:
            ray.shutdown()


def _map_shards(
    ray: Any, source: SourceArguments, settings: GenSettings, shards_dir: Path, run: Path,
    scale: ScaleSection, count: int,
) -> str:  # fmt: skip

    # shard folders are scratch: the generation cache is what a re-run resumes from
    if shards_dir.exists():
        shutil.rmtree(shards_dir)
    parts = [shards_dir / f"part-{i}-of-{count}" for i in range(count)]
    rows = [
        {
            "index": i,
            "count": count,
            "output": str(part),
            "source": json.dumps(source),
            "settings": pickle.dumps(settings),
        }
        for i, part in enumerate(parts)
    ]
    outcomes = (
        ray.data.from_items(rows, override_num_blocks=count)
        .map(
            gen_shard,
            num_cpus=scale["cpus_per_shard"],
            num_gpus=scale["gpus_per_shard"] or None,
            concurrency=count,
        )
        .take_all()
    )
    failed = sorted((o for o in outcomes if o["error"]), key=lambda o: o["index"])
    if failed:
        kind = InputError if all(o["bad_input"] for o in failed) else RuntimeFault
        raise kind(f"shard {failed[0]['index']}/{count}: {failed[0]['error']}")
    merged = shards_dir / "merged"  # shards_dir was emptied above
    names = merge_shards(parts, merged)
    if run.exists():
        shutil.rmtree(run)
    merged.replace(run)
    return f"merged {count} Ray shards into {run}: {', '.join(names)}"
