"""Capture: exact attention rows from a real forward pass, and what that step needs.

* ``engine``: the capturing attention function, :func:`~attnscope.capture.engine.prepare`
  (switch a loaded model to it) and :func:`~attnscope.capture.engine.run` (one forward with
  a request active).
* ``anatomy``: one loaded model's parts (layers, projections, norms, kinds, the logits head)
  and the reasons a family cannot run an analysis; :func:`~attnscope.capture.anatomy.of`.
* ``hooks``: named hook points on the anatomy; one :class:`~attnscope.capture.hooks.Run`
  reads, edits and keeps gradients at them.
* ``masking``: the one rule for reading an attention mask.
* ``norm``: the value-vector norms of the norm measure, computed during capture.
* ``memory``: the memory guard that refuses a step before it allocates too much.

This package sits above ``attnscope.model`` and below the analyses (``attnscope.core``).
Importing the package itself imports nothing heavy; ``engine`` imports torch and transformers.
"""
