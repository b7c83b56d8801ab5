"""The two light paths a short command takes, each equal to the heavy path it replaces:
a local folder's JSON Lines read without `datasets` (the same rows, values and types as
`datasets.load_dataset` gives), and a mean-pooled model folder run with transformers alone
(the same vectors as sentence-transformers, bit for bit, and the same similarities)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.environment import ENCODER

from shiftbench.core.data.hubfolder import card_metadata, load_local, read_card_configs
from shiftbench.core.data.rows import Rows, read_plain
from shiftbench.core.models.encoders import resolve_encoder
from shiftbench.core.models.meanpooled import MeanPooledModel, plain_recipe

CARD = "---\nconfigs:\n- config_name: default\n  data_files:\n{files}---\n"


def same(light, heavy):
    """Equal splits, columns and rows, types included (repr tells 5 from 5.0)."""
    assert list(light) == list(heavy)
    for split in light:
        assert light[split].column_names == heavy[split].column_names
        assert repr(light[split].to_list()) == repr(heavy[split].to_list())


def folder_of(tmp_path, splits, extra=""):
    """A Hub-layout folder holding each split's JSON Lines text."""
    files = ""
    for split, text in splits.items():
        (tmp_path / f"{split}.jsonl").write_text(text, encoding="utf-8")
        files += f"  - split: {split}\n    path: {split}.jsonl\n"
    (tmp_path / "README.md").write_text(CARD.format(files=files) + extra, encoding="utf-8")
    return tmp_path


def test_every_real_config_reads_as_datasets_reads_it(shared_data):
    folders = sorted(p.parent for p in shared_data.glob("*/README.md"))
    assert len(folders) >= 7
    for folder in folders:
        for config in read_card_configs(folder):
            light = load_local(folder, config)
            assert {type(s) for s in light.values()} == {Rows}, (folder.name, config)
            same(light, load_local(folder, config, plain=False))


@pytest.mark.parametrize(
    "case, splits, light",
    [
        # ints and floats in one column: both read doubles
        ("mixed numbers", {"test": '{"a": "x", "s": 5}\n{"a": "y", "s": 4.2}\n'}, True),
        # a key some rows lack, a null, a blank line, a date-like string, unicode, a list
        (
            "ragged",
            {"test": '{"a": "x", "d": "2020-01-02"}\n\n{"a": null, "b": [1, 2], "c": "ü✓"}\n'},
            True,
        ),
        # splits of other schemas: datasets casts them to the first one's, so it reads them
        ("split schemas", {"test": '{"s": 1.5}\n', "train": '{"s": 2}\n'}, False),
        # a nested record: datasets may keep it as JSON text
        ("nested", {"test": '{"a": {"b": 1}}\n{"a": {"c": "x"}}\n'}, False),
    ],
)
def test_made_files_read_as_datasets_reads_them(tmp_path, case, splits, light):
    folder = folder_of(tmp_path, splits)
    read = load_local(folder, "default")
    assert all(isinstance(s, Rows) for s in read.values()) is light, case
    same(read, load_local(folder, "default", plain=False))


def test_declared_features_and_files_outside_go_to_datasets(tmp_path):
    inner = tmp_path / "inner"
    inner.mkdir()
    (tmp_path / "outside.jsonl").write_text('{"s": 1}\n', encoding="utf-8")
    (inner / "README.md").write_text(
        CARD.format(files="  - split: test\n    path: ../outside.jsonl\n"), encoding="utf-8"
    )
    assert read_plain(inner, card_metadata(inner), "default") is None
    typed = folder_of(tmp_path, {"test": '{"s": 1}\n'})
    card = (typed / "README.md").read_text(encoding="utf-8")
    features = "dataset_info:\n  features:\n  - name: s\n    dtype: float32\n---\n"
    (typed / "README.md").write_text(card[: -len("---\n")] + features, encoding="utf-8")
    assert read_plain(typed, card_metadata(typed), "default") is None
    assert repr(load_local(typed, "default")["test"].to_list()) == "[{'s': 1.0}]"


def test_reading_a_local_folder_imports_no_datasets(shared_data):
    code = (
        "import sys\n"
        "from shiftbench.core.data.sources import resolve_source\n"
        f"s = resolve_source({str(shared_data / 'STSBenchmark')!r}, task_type='STS')\n"
        "rows = s.load('default')['test']\n"
        "print(len(rows), 'datasets' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["1379", "False"]


# texts the real datasets hold, and texts made to meet every edge of the batching: empty,
# blank, padded, past the 256-token limit, ties in length
EDGES = ["", " ", "  padded both sides  ", "ünïcödé ✓ 😀 中文", "word " * 600, "a", "b", "c"]


IDS = ("id", "_id")


def texts_of(shared_data, per_file=20):
    texts = []
    for path in sorted(shared_data.glob("*/**/*.jsonl")):
        with open(path, encoding="utf-8") as handle:
            for _, line in zip(range(per_file), handle, strict=False):
                row = json.loads(line)
                texts += [v for k, v in row.items() if isinstance(v, str) and k not in IDS]
    return list(dict.fromkeys(texts + EDGES))


@pytest.fixture(scope="module")
def models():
    from sentence_transformers import SentenceTransformer

    path = Path(resolve_encoder(ENCODER)[0])
    recipe = plain_recipe(path)
    assert recipe is not None and recipe.max_seq_length == 256
    return SentenceTransformer(str(path), device="cpu"), MeanPooledModel(path, recipe)


@pytest.mark.parametrize("batch_size", [32, 7])
def test_plain_vectors_equal_sentence_transformers_bit_for_bit(shared_data, models, batch_size):
    heavy, light = models
    texts = texts_of(shared_data)
    assert len(texts) > 500
    expected = heavy.encode(texts, batch_size=batch_size, convert_to_numpy=True)
    got = light.encode(texts, batch_size=batch_size)
    assert got.dtype == expected.dtype == np.float32
    assert np.array_equal(got, expected)


def test_a_prompt_is_encoded_as_sentence_transformers_encodes_it(shared_data, models):
    heavy, light = models
    texts = texts_of(shared_data, per_file=3)
    prompt = "Represent the sentence: "
    expected = heavy.encode(texts, prompt=prompt, convert_to_numpy=True)
    assert np.array_equal(light.encode(texts, prompt=prompt), expected)


def test_plain_similarities_equal_sentence_transformers(models):
    heavy, light = models
    vectors = heavy.encode(["one text", "another one", "a third", "x"], convert_to_numpy=True)
    a, b = vectors[:2], vectors[2:]
    assert np.array_equal(light.similarity(a, b).numpy(), heavy.similarity(a, b).numpy())
    assert np.array_equal(light.similarity(a[0], b).numpy(), heavy.similarity(a[0], b).numpy())
    assert np.array_equal(
        light.similarity_pairwise(a, b).numpy(), heavy.similarity_pairwise(a, b).numpy()
    )


def plain_copy(tmp_path, change):
    """A copy of the packaged model's folder (weights linked) with one file changed."""
    source = Path(resolve_encoder(ENCODER)[0])
    folder = tmp_path / "model"
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("model.safetensors"))
    (folder / "model.safetensors").symlink_to(source / "model.safetensors")
    name, edit = change
    data = json.loads((folder / name).read_text(encoding="utf-8"))
    edit(data)
    (folder / name).write_text(json.dumps(data), encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    "change",
    [
        ("1_Pooling/config.json", lambda d: d.update(pooling_mode_cls_token=True)),
        ("1_Pooling/config.json", lambda d: d.update(pooling_mode_mean_tokens=False)),
        ("config_sentence_transformers.json", lambda d: d.update(prompts={"query": "q: "})),
        ("config_sentence_transformers.json", lambda d: d.update(similarity_fn_name="dot")),
        ("sentence_bert_config.json", lambda d: d.update(do_lower_case=True)),
        ("1_Pooling/config.json", lambda d: d.update(include_prompt=False)),
        ("config.json", lambda d: d.update(model_type="xlm-roberta")),
        ("modules.json", lambda d: d.pop()),
    ],
    ids=[
        "cls",
        "no-mean",
        "prompts",
        "dot",
        "lowercase",
        "prompt-left-out",
        "architecture",
        "no-normalize",
    ],
)
def test_any_other_folder_goes_to_sentence_transformers(tmp_path, change):
    assert plain_recipe(plain_copy(tmp_path, ("modules.json", lambda d: None))) is not None
    assert plain_recipe(plain_copy(tmp_path / "changed", change)) is None


def test_scoring_with_the_packaged_model_imports_no_sentence_transformers():
    code = (
        "import sys\n"
        "from shiftbench.core.models.encoders import Encoder\n"
        f"e = Encoder({ENCODER!r})\n"
        "v = e.embed(['a text', 'another'])\n"
        "print(v.shape, 'sentence_transformers' in sys.modules, type(e.model).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["(2,", "384)", "False", "MeanPooledModel"]
