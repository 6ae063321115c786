"""SVG figures drawn from results (not terminal captures), registered on ``render.figure``.

Each module lays out one result type with the small builder in ``svg``; words come
from the catalogue in ``ctx.lang``. Results without a picture of their own get the
terminal view's text laid out by ``textview``. Importing this package registers the
figures; the list below is the table of figures.
"""

from attnscope.render.figures import heads, mask, matrix, trace, weights

__all__ = ["heads", "mask", "matrix", "trace", "weights"]
