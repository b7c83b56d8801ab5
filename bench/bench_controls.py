"""Speed of the rule-based controls and of the probes, against anchors timed in one run.

Part 1 makes every rule-based control (seven configs) of a local dataset's texts in this
process and compares it with its floor: one tagging pass over the same texts (the swaps
cannot do less than tag each text once). Goal: at most 3.0.

Part 2 runs `shiftbench probe` on the run folder part 1 wrote (every similarity, both
measures, the tables and files, no plots) and compares it with encoding the probe's
unique texts once with the bare sentence-transformers model. Goal: at most 1.2.

    python bench/bench_controls.py /data/MRPC --task-type PairClassification [--limit 1000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

RULES = ("synonym-swap-1,synonym-swap-2,synonym-swap-3,antonym-swap,word-jumble-1,"
         "word-jumble-2,word-jumble-3")  # fmt: skip
MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--task-type", default="PairClassification")
    parser.add_argument("--limit", type=int, default=1000)
    parser.add_argument("--wordnet-dir", default=None)
    args = parser.parse_args()

    from shiftbench.cli import cli
    from shiftbench.core.data.sources import resolve_source
    from shiftbench.gen.controls import TOKEN, _tags, load_lexicon

    source = resolve_source(str(args.folder), task_type=args.task_type)
    texts = []
    for subset in source.subsets:
        for split in source.splits:
            rows = source.load(subset)[split].to_list()[: args.limit]
            texts += [r[f] for r in rows for f in source.text_fields]
    unique = list(dict.fromkeys(texts))
    load_lexicon(args.wordnet_dir, ("verb", "adjective"))  # opened before either timing
    _tags(("warm", "up"))

    _tags.cache_clear()
    start = time.perf_counter()
    for text in unique:
        _tags(tuple(TOKEN.findall(text)))
    anchor = time.perf_counter() - start
    _tags.cache_clear()

    scratch = Path(tempfile.mkdtemp(prefix="bench-controls-"))
    run = scratch / "run"
    options = ["--task-type", args.task_type, "--source-language", "en"]
    if args.wordnet_dir:
        options += ["--wordnet-dir", args.wordnet_dir]
    start = time.perf_counter()
    result = CliRunner().invoke(
        cli, ["gen", str(args.folder), *options, "--limit", str(args.limit), "-t", RULES,
              "-s", "1", "-q", "-o", str(run)],
    )  # fmt: skip
    made = time.perf_counter() - start
    assert result.exit_code == 0, result.output
    print(f"{len(unique)} unique texts of {args.folder}")
    print(f"anchor: tag every text once      {anchor:8.2f} s")
    print(
        f"seven rule-based controls        {made:8.2f} s   ratio {made / anchor:5.2f} (goal <= 3.0)"
    )

    from sentence_transformers import SentenceTransformer

    from shiftbench.core.models.encoders import resolve_encoder
    from shiftbench.evaluate.probes import ProbeSettings, gather
    from shiftbench.evaluate.run import collect_run_folder

    anchors = gather(collect_run_folder(run), ProbeSettings((0.0,), 0, "gold", None))
    probe_texts = list(
        dict.fromkeys(
            t for a in anchors
            for t in (a.text, a.paraphrase, a.random, *(x for v in a.controls.values() for x in v))
        )
    )  # fmt: skip
    model = SentenceTransformer(resolve_encoder(MODEL)[0], device="cpu")
    model.encode(["warm up"])
    start = time.perf_counter()
    model.encode(probe_texts, batch_size=32)
    bare = time.perf_counter() - start
    start = time.perf_counter()
    result = CliRunner().invoke(
        cli, ["probe", str(run), "-m", MODEL, "-q", "--no-plots", "-o", str(scratch / "p")]
    )
    probed = time.perf_counter() - start
    assert result.exit_code == 0, result.output
    print(f"{len(anchors)} anchors, {len(probe_texts)} unique texts to encode")
    print(f"anchor: bare model.encode         {bare:8.2f} s")
    ratio = probed / bare
    print(f"shiftbench probe                 {probed:8.2f} s   ratio {ratio:5.2f} (goal <= 1.2)")


if __name__ == "__main__":
    main()
