"""The note's chart: what a query mixes in from each earlier token, for one prompt (``single``) or for
every line of an input file in padded batches (``batch``, which cuts each row back with ``single``'s
``query_rows``). ``weights`` is the one-prompt analysis.
"""

from attnscope.core.weights.single import weights

__all__ = ["weights"]
