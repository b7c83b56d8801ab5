"""The bare side of bench_vllm.py: one `vllm.LLM.generate` call, as a process of its own.

What a user of vLLM writes without shiftbench: load `vllm.LLM` on the checkpoint with the
given keyword arguments, call `generate` once on every prompt (as token ids) with each
prompt's own `SamplingParams`, and keep the texts. Nothing else: no cache, no checks, no
run folder.

REQUESTS is the JSON file bench_vllm.py writes: {"checkpoint": FOLDER, "engine": {keyword
arguments of vllm.LLM}, "requests": [{"text", "prompt_token_ids", "params": {keyword
arguments of SamplingParams}}, ...]}. Writes each input text's output, as vLLM returns it,
to OUT/texts.json (in the requests' order).

    python bench/vllm_side.py REQUESTS OUT
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("requests", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    spec = json.loads(args.requests.read_text(encoding="utf-8"))

    from vllm import LLM, SamplingParams

    llm = LLM(model=spec["checkpoint"], tokenizer=spec["checkpoint"], **spec["engine"])
    requests = spec["requests"]
    outputs = llm.generate(
        [{"prompt_token_ids": r["prompt_token_ids"]} for r in requests],
        [SamplingParams(**r["params"]) for r in requests],
        use_tqdm=False,
    )
    texts = {r["text"]: o.outputs[0].text for r, o in zip(requests, outputs, strict=True)}
    (args.out / "texts.json").write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    print(f"{len(texts)} texts generated")


if __name__ == "__main__":
    main()
