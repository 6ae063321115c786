"""SVG figures drawn from results (not terminal captures), one module per result type.

Each module's ``figure(result, ctx)`` lays out one result type with the small builder in
``svg``; words come from the catalogue in ``ctx.lang``. The command table
(``attnscope.commands``) says which result has a figure, and ``render.load_views`` registers
it on ``render.figure``. Results without a picture of their own get the terminal view's text
laid out by ``textview``.
"""
