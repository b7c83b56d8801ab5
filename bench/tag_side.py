"""The bare side of bench_controls.py's first part: tag each text once, as a process of its
own (interpreter start, the tagger's import, one tagging pass).

The rule-based controls cannot do less than tag each unique text once: this splits each
text into tokens with the controls' own pattern (copied here so that this side imports no
shiftbench; the bench checks the copy is current) and tags them with TextBlob's pattern
tagger, as gen/controls.py does, nothing else. It writes the number of texts and tokens to
OUT/tagged.json for the bench to check against the run folder gen wrote.

    python bench/tag_side.py TEXTS_JSON OUT
"""

from __future__ import annotations

import argparse
import json
import re
import warnings
from pathlib import Path

# gen/controls.py's WORD and TOKEN
WORD = re.compile(r"\w+(?:['\u2019.\-]\w+)*")
TOKEN = re.compile(rf"{WORD.pattern}|[^\w\s]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("texts", type=Path, help="JSON list of the unique texts")
    parser.add_argument("out", type=Path)
    args = parser.parse_args()

    texts = json.loads(args.texts.read_text(encoding="utf-8"))
    from textblob.en import tag

    tokens = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for text in texts:
            words = TOKEN.findall(text)
            if words:
                tokens += len(tag(" ".join(words), tokenize=False))
    document = {"texts": len(texts), "tokens": tokens}
    (args.out / "tagged.json").write_text(json.dumps(document), encoding="utf-8")
    print(f"{len(texts)} texts, {tokens} tokens tagged")


if __name__ == "__main__":
    main()
