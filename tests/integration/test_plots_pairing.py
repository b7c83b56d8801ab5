"""The plots pair as the tables do, and weak evidence is marked the same way everywhere.

A run whose variant has failed rows is scored for real: its usable rows are fewer than the
original's, so the original's score on all rows differs from its score on the variant's
rows, and every plot must draw the second (the tables' "original (same rows)").
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from support.environment import ENCODER
from support.evaluate import _rotated, _sts_run_folder

from shiftbench.core.evidence import THIN_NOTE

FAILED = range(0, 42, 4)  # rows whose rewrite failed its checks: left out of the variant


def _variant(i, r):
    if i in FAILED:
        return {"sentence1": "", "status": "empty"}
    return {"sentence1": _rotated(r["sentence1"], 1)}


@pytest.fixture(scope="module")
def planted_scores(tmp_path_factory):
    """evaluate's results folder for the planted run, and the matplotlib figures evaluate
    built for its plots, by file name."""
    from shiftbench.cli import cli
    from shiftbench.evaluate import plots

    base = tmp_path_factory.mktemp("pairing")
    _sts_run_folder(base / "run", {"paraphrase": _variant})
    meta_file = base / "run" / "shiftbench.json"
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    meta["configs"]["paraphrase"]["axis"] = "Lexical/Stylistic"  # an axis of the report's
    meta_file.write_text(json.dumps(meta), encoding="utf-8")
    drawn = {}
    saved = plots._save

    def keep(fig, path):
        drawn[path.name] = fig
        saved(fig, path)

    out = base / "results"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plots, "_save", keep)
        from click.testing import CliRunner

        done = CliRunner().invoke(
            cli, ["evaluate", str(base / "run"), "-m", ENCODER, "-q", "-o", str(out)],
            catch_exceptions=False,
        )  # fmt: skip
    assert done.exit_code == 0, done.output

    return out, drawn


def _drawn(figures):
    """The figures each plot drew, read back from its matplotlib objects."""
    from matplotlib.collections import LineCollection, PathCollection

    top, bottom = figures["bars.png"].axes[:2]
    (intervals,) = [c for c in bottom.collections if isinstance(c, LineCollection)]
    scatter = figures["scatter.png"].axes[0]
    (points,) = [c for c in scatter.collections if isinstance(c, PathCollection)]
    return {
        "slots": [t.get_text() for t in bottom.get_xticklabels()],
        "same_rows": [b.get_height() for b in top.containers[0]],
        "rewritten": [b.get_height() for b in top.containers[1]],
        "delta": [b.get_height() for b in bottom.containers[0]],
        "ci95": [[float(s[0][1]), float(s[1][1])] for s in intervals.get_segments()],
        "heatmap": figures["heatmap.png"].axes[0].images[0].get_array().tolist(),
        "scatter": [[float(v) for v in p] for p in points.get_offsets()],
        "scatter_ci95": [list(line.get_ydata()) for line in scatter.lines[:-1]],
    }


def _records(out):
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    original, variant = doc["models"][0]["results"]
    return original, variant


def test_every_plot_draws_the_original_on_the_variants_rows(planted_scores):
    """bars, heatmap and scatter draw the paired figures of summary.json and results.json:
    the original on the variant's 31 usable rows, not on all 42; the change with its 95%
    interval."""
    out, figures = planted_scores
    drawn = _drawn(figures)
    original, variant = _records(out)
    assert (original["rows"], variant["rows"], variant["rows_total"]) == (42, 31, 42)
    # the planted difference is real: on all rows the original scores otherwise
    assert abs(original["main_score"] - variant["original_same_rows"]) > 1e-3
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    model = summary["models"][ENCODER]
    axis, total = model["axes"]["Lexical/Stylistic"], model["total"]

    assert drawn["slots"] == ["Lexical/Stylistic", "total"]
    same_rows = variant["original_same_rows"]
    assert drawn["same_rows"] == pytest.approx([same_rows, same_rows], abs=1e-12)
    assert drawn["same_rows"] == pytest.approx(
        [axis["score"] - axis["delta"], total["score"] - total["delta"]], abs=1e-12
    )
    assert drawn["rewritten"] == pytest.approx([variant["main_score"]] * 2, abs=1e-12)
    assert drawn["delta"] == pytest.approx([variant["delta"]] * 2, abs=1e-12)
    assert drawn["delta"] == [axis["delta"], total["delta"]]
    assert drawn["ci95"] == [axis["ci95"], total["ci95"]]
    # results.json's interval is made from unrounded draws, summary.json's from the
    # draws results.json keeps (six decimals)
    assert drawn["ci95"][0] == pytest.approx(variant["ci95"], abs=1e-5)

    assert drawn["heatmap"] == [[model["transforms"]["paraphrase"]["delta"]]]
    (unit,) = summary["units"]
    figure = unit["transforms"]["paraphrase"]
    assert drawn["scatter"] == [[figure["score"] - figure["delta"], figure["score"]]]
    assert drawn["scatter"][0] == pytest.approx([same_rows, variant["main_score"]], abs=1e-12)
    low, high = figure["ci95"]
    assert drawn["scatter_ci95"] == [
        [figure["score"] - figure["delta"] + low, figure["score"] - figure["delta"] + high]
    ]


def test_report_md_links_the_plots_it_has(planted_scores, invoke, tmp_path):
    """report.md embeds each plot drawn beside it (relative links), and none when the
    plots were not drawn."""
    out, _ = planted_scores
    text = (out / "report.md").read_text(encoding="utf-8")
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert links == ["plots/bars.png", "plots/heatmap.png", "plots/scatter.png"]
    assert all((out / link).is_file() for link in links)
    done = invoke("report", out, "-o", tmp_path / "bare", "--no-plots")
    assert done.exit_code == 0, done.output
    assert "![" not in (tmp_path / "bare" / "report.md").read_text(encoding="utf-8")
    assert not (tmp_path / "bare" / "plots").exists()


def test_a_zero_width_interval_is_marked_everywhere(planted_scores, invoke, tmp_path):
    """Every bootstrap draw giving the same delta makes an interval of zero width on 31
    items (not few): the terminal, report.md and the leaderboard mark it `*` and say
    what that means, rather than show it as certainty."""
    from shiftbench.core.evidence import ZERO_WIDTH_NOTE

    out, _ = planted_scores
    copy = shutil.copytree(out, tmp_path / "flat")
    doc = json.loads((copy / "results.json").read_text(encoding="utf-8"))
    variant = doc["models"][0]["results"][1]
    draws = len(variant["delta_replicates"])
    variant.update(delta=0.0, ci95=[0.0, 0.0], delta_replicates=[0.0] * draws,
                   main_score=variant["original_same_rows"])  # fmt: skip
    (copy / "results.json").write_text(json.dumps(doc), encoding="utf-8")

    done = invoke("report", copy, "-o", tmp_path / "report", "--no-plots")
    assert done.exit_code == 0, done.output
    axis_line = next(x for x in done.stdout.splitlines() if x.startswith(ENCODER))
    assert axis_line.endswith("+0.0000 [+0.0000, +0.0000]*")
    assert f"\n\n{THIN_NOTE}\n{ZERO_WIDTH_NOTE}\n" in done.stdout
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "| +0.0000 [+0.0000, +0.0000]* |" in report
    assert f"\n{THIN_NOTE}\n\n{ZERO_WIDTH_NOTE}\n" in report

    done = invoke("leaderboard", copy, "-o", tmp_path / "board")
    assert done.exit_code == 0, done.output
    page = (tmp_path / "board" / "index.html").read_text(encoding="utf-8")
    cells = re.findall(r'<span class="ci">([^<]*)</span>', page)
    assert cells and set(cells) == {"[+0.0000, +0.0000]*"}
    assert f'<p class="meta">{ZERO_WIDTH_NOTE}</p>' in page
    assert "drop</th>" not in page and "<th>total change</th>" in page


def test_the_card_marks_a_weak_interval():
    """The card's results table marks a delta whose interval is thin or of zero width,
    with the same notes, and leaves a wide one as it was."""
    from shiftbench.cards.results import ModelScores, _weak, prose
    from shiftbench.core.evidence import ZERO_WIDTH_NOTE

    wide = {"config": "a-s1", "rows": 40, "delta": -0.2, "ci95": [-0.3, -0.1]}
    flat = {**wide, "delta": 0.0, "ci95": [0.0, 0.0]}
    few = {**wide, "rows": 3}
    assert (_weak(wide), _weak(flat), _weak(few)) == ((), ("zero width",), ("few items",))

    scores = ModelScores("org/m", None, "cosine_spearman", "STS",
                         (("a-s1", "test", "default", 0.5, -0.2),
                          ("b-s1", "test", "default", 0.7, 0.0)),
                         weak=((), ("zero width",)))  # fmt: skip
    lines = prose([scores])
    assert "| `a-s1` | 0.5000 (-0.2000) |" in lines
    assert "| `b-s1` | 0.7000 (+0.0000*) |" in lines
    assert lines[-3:] == [THIN_NOTE, "", ZERO_WIDTH_NOTE]
