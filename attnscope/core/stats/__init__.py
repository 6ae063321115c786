"""Per-head statistics over a corpus: the driver, the worker that turns a shard into mergeable
aggregates, the reduction per layer, the aggregates and their bootstrap, and the Ray Data engine.
"""
