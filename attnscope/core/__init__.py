"""The core: tensors in, result dataclasses out. Nothing here prints or touches the disk.

One module per job: ``capture`` (exact attention rows from a forward pass),
``tokens`` (readable tokens, words, query spans), ``select`` (layer/head specs),
``weights`` (the main chart), and one module per further command.
"""
