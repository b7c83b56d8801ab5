"""One side of bench_langid.py's whole-process comparison: identify the language of every
text with one identifier, as a process of its own (interpreter start, the identifier's
import and model load, the detection).

TEXTS_JSON maps each language to its texts (written by the bench before any timing). The
codes found go to OUT/codes.json, language by language, for the bench to check that both
identifiers answered every text.

    python bench/langid_side.py lingua|langdetect TEXTS_JSON OUT
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=["lingua", "langdetect"])
    parser.add_argument("texts", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()

    texts = json.loads(args.texts.read_text(encoding="utf-8"))
    from shiftbench.core.text.langid import get_identifier

    identifier = get_identifier(args.name)
    codes = {lang: identifier.detect(batch) for lang, batch in texts.items()}
    (args.out / "codes.json").write_text(json.dumps(codes), encoding="utf-8")
    print(f"{sum(map(len, codes.values()))} texts identified by {args.name}")


if __name__ == "__main__":
    main()
