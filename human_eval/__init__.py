"""human_eval: rating batches, exports, imports and agreement."""
