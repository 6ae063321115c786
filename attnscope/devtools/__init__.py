"""Maintainer tools that generate or check files of the repository (docs, examples).

Nothing here is imported by the ``attnscope`` command line or the Python API; run the
modules with ``python -m attnscope.devtools.NAME``.
"""
