"""The core every layer stands on: settings, registries, retries, protocols, statistics,
the Hub, ratings; data sources and the run folder (`data`), text and languages (`text`),
encoders (`models`). The core imports nothing of shiftbench's but itself and `errors`."""
