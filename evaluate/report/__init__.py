"""From scored records to robustness figures: the axis aggregation, statistics and tables.

Records come per (model, config, split). Within a dataset subset, a config's main score is
averaged over its scored splits and a transformation's over its seeds. Each prompt variant
of a transformation (`paraphrase-p2`) is a transformation row of its own; the axes and the
total use the default prompt only. A dataset's figure is the mean over its subsets, and
every figure across datasets is the mean over datasets: an axis's score is the mean over
its transformations (Lexical/Stylistic, Length, Language), the total the unweighted mean
of the axes, the original excluded, as HTEB aggregates. Results scored under `--protocol
hteb` are averaged in HTEB's release's order instead (each transformation over datasets
first, then the axes; see `aggregation`).

Every variant figure comes as a score and as a paired delta (the variant's score minus the
original's on the same rows). The statistics follow HTEB and PTEB with one dataset as the
unit of observation (seeds and subsets averaged first); each is defined where it is
computed.
"""
