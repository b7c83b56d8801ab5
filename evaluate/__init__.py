"""evaluate: score sentence encoders on original vs transformed data with mteb's metrics."""
