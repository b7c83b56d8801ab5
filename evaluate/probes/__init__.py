"""Task-free alignment probes after ALIGN-SIM (Mahajan et al., 2024): does an encoder move
when meaning changes and stay put when it does not?

Every probe starts from an anchor: the first text field of an original row that has a
paraphrase (a gold pair of the dataset, or an LLM paraphrase config of the run folder).
Each anchor gets one random partner, drawn with the seed from the texts of the same
dataset and split. A probe run may pool several datasets (run folders or releases). Each
figure is computed with the cosine similarity and with ALIGN-SIM's normalised Euclidean
distance (NED, a distance: lower is closer):

- criterion 1, distinction: the share of anchors with cos(a, paraphrase) - cos(a, random)
  > ε, or NED(a, paraphrase) - NED(a, random) < ε, averaged over a fixed symmetric ε grid
  per measure; and the mean paraphrase and random-pair figures;
- criteria 2 and 4, the controls that keep the meaning (synonym-swap-n, the affirmative
  paraphrase of a negated text): the mean figure, adjusted with the random-pair mean
  pooled over the datasets (ALIGN-SIM's equations 1 and 2; equation 2 in both of the
  readings the paper allows, see ADJUSTMENTS);
- criteria 3 and 5 and shiftbench's own negation control, the controls that change the
  meaning: how much closer the paraphrase is than the control (raw, not adjusted), and
  the share of anchors for which that exceeds each ε.
"""

from shiftbench.evaluate.probes.anchors import (
    ADJUSTMENTS,
    DISTANCES,
    DISTINCTION_GRIDS,
    GOLD,
    MEASURES,
    RANDOM_PAIRS,
    STS_TOP_SHARE,
    Anchor,
    Dataset,
    NegationPairs,
    ProbeSettings,
    control_configs,
    gather,
    gather_datasets,
    gold_threshold,
    parse_epsilons,
    read_negation_pairs,
)
from shiftbench.evaluate.probes.figures import (
    Values,
    adjust,
    closer_by,
    criterion,
    distinction_share,
    eps_key,
    negation_pair_figures,
    pair_scores,
    pooled_random_mean,
    probe_document,
    score,
    summarise,
    summarise_measures,
)
from shiftbench.evaluate.probes.outputs import histogram, row_records, write_probe_outputs
from shiftbench.evaluate.probes.tables import (
    coverage_lines,
    figure_table,
    markdown,
    negation_pair_table,
    plain,
    share_table,
)

__all__ = [
    "ADJUSTMENTS",
    "DISTANCES",
    "DISTINCTION_GRIDS",
    "GOLD",
    "MEASURES",
    "RANDOM_PAIRS",
    "STS_TOP_SHARE",
    "Anchor",
    "Dataset",
    "NegationPairs",
    "ProbeSettings",
    "Values",
    "adjust",
    "closer_by",
    "control_configs",
    "coverage_lines",
    "criterion",
    "distinction_share",
    "eps_key",
    "figure_table",
    "gather",
    "gather_datasets",
    "gold_threshold",
    "histogram",
    "markdown",
    "negation_pair_figures",
    "negation_pair_table",
    "pair_scores",
    "parse_epsilons",
    "plain",
    "pooled_random_mean",
    "probe_document",
    "read_negation_pairs",
    "row_records",
    "score",
    "share_table",
    "summarise",
    "summarise_measures",
    "write_probe_outputs",
]
