"""The bare side of bench_gen.py: a plain transformers generate loop, as a process of its own.

It loads the checkpoint the embedded backend loads (the dequantised copy of the packaged
SmolLM2 GGUF file) the way the backend does (float32, left padding), applies the chat
template to each prompt and decodes greedily, with the schedule `shiftbench gen` follows, so
that both sides run the same batches: the requests in gen's order, handed over 64 at a time,
each 64 sorted by prompt length (in tokens) and cut into batches of `--batch-size`; each
batch generates up to its largest budget, and each row keeps its own budget's tokens up to
the first end-of-sequence token. A row still cut at its budget is asked again with twice the
budget (up to the cap), as gen does, until it ends by itself or reaches the cap. Nothing
else: no cache, no checks, no run folder.

REQUESTS is the JSON file bench_gen.py writes: {"cap": N, "requests": [{"text", "prompt",
"budget"}, ...]} (the prompt rendered, before the chat template). Writes each input text's
output to OUT/texts.json.

    python bench/transformers_side.py REQUESTS CHECKPOINT OUT [--batch-size 8]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

CHUNK = 64  # requests gen hands the embedded backend at once (its chunk_size)
GROWTH = 2  # a cut output is asked again with this many times its budget, up to the cap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("requests", type=Path)
    parser.add_argument("checkpoint")
    parser.add_argument("out", type=Path)
    parser.add_argument("--batch-size", type=int, default=8, help="gen's default")
    args = parser.parse_args()
    spec = json.loads(args.requests.read_text(encoding="utf-8"))
    cap = spec["cap"]

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, StoppingCriteriaList
    from transformers.utils import logging

    logging.disable_progress_bar()  # as the backend does

    tokenizer = AutoTokenizer.from_pretrained(args.checkpoint)
    model = AutoModelForCausalLM.from_pretrained(args.checkpoint, dtype=torch.float32)
    model.eval()
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    eos = model.generation_config.eos_token_id
    eos_ids = {eos} if isinstance(eos, int) else set(eos)

    prompts = {
        r["text"]: tokenizer.apply_chat_template(
            [{"role": "user", "content": r["prompt"]}], tokenize=False, add_generation_prompt=True
        )
        for r in spec["requests"]
    }
    lengths = {
        t: len(tokenizer(p, add_special_tokens=False)["input_ids"]) for t, p in prompts.items()
    }
    outputs: dict[str, str] = {}
    todo = {r["text"]: r["budget"] for r in spec["requests"]}
    while todo:
        again: dict[str, int] = {}
        texts = list(todo)
        for start in range(0, len(texts), CHUNK):
            chunk = sorted(texts[start : start + CHUNK], key=lambda t: lengths[t])
            for first in range(0, len(chunk), args.batch_size):
                batch = chunk[first : first + args.batch_size]
                budgets = [todo[t] for t in batch]
                enc = tokenizer(
                    [prompts[t] for t in batch],
                    return_tensors="pt",
                    padding=True,
                    add_special_tokens=False,
                )
                length = enc["input_ids"].shape[1]

                def spent(ids, scores, budgets=budgets, length=length, **_):
                    made = ids.shape[1] - length
                    return torch.tensor([made >= b for b in budgets], dtype=torch.bool)

                with torch.inference_mode():
                    out = model.generate(
                        **enc,
                        max_new_tokens=max(budgets),
                        do_sample=False,
                        pad_token_id=tokenizer.pad_token_id,
                        stopping_criteria=StoppingCriteriaList([spent]),
                    )
                new = out[:, enc["input_ids"].shape[1] :].tolist()
                for text, row, budget in zip(batch, new, budgets, strict=True):
                    row = row[:budget]
                    stop = next((k for k, tok in enumerate(row) if tok in eos_ids), None)
                    tokens = row if stop is None else row[:stop]
                    outputs[text] = tokenizer.decode(tokens, skip_special_tokens=True).strip()
                    if stop is None and budget < cap:
                        again[text] = min(cap, budget * GROWTH)
        todo = {t: again[t] for t in texts if t in again}  # gen asks again in its own order
    (args.out / "texts.json").write_text(json.dumps(outputs, ensure_ascii=False), encoding="utf-8")
    print(f"{len(outputs)} texts generated")


if __name__ == "__main__":
    main()
