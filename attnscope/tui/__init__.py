"""``attnscope tui``: a terminal browser of one prompt, built on Textual (the optional extra ``tui``).

``session`` holds what the app shows and builds it from the library (no Textual); ``app`` is the
Textual app. Nothing else in attnscope imports this package's Textual modules.
"""
