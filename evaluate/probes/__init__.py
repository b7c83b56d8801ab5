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
