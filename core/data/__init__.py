"""Data sources (MTEB datasets, local folders, the sample) and the run folder gen writes."""
