"""The table of result types: every schema attnscope writes or reads, imported by name.

Adding a command's result means adding its class here; ``from_json`` and the JSON
reference read this table. This module computes nothing.
"""

from __future__ import annotations

from attnscope.results import Result
from attnscope.results.explain import ExplainResult
from attnscope.results.generate import GenerateResult
from attnscope.results.heads import HeadsResult
from attnscope.results.info import InfoResult
from attnscope.results.mask import MaskResult
from attnscope.results.matrix import MatrixResult
from attnscope.results.reuse import ReuseResult
from attnscope.results.roles import RolesResult
from attnscope.results.rope import RopeResult
from attnscope.results.tokens import TokensResult
from attnscope.results.trace import TraceResult
from attnscope.results.weights import WeightsResult

RESULT_TYPES: tuple[type[Result], ...] = (
    TokensResult,
    WeightsResult,
    MaskResult,
    HeadsResult,
    MatrixResult,
    InfoResult,
    TraceResult,
    ExplainResult,
    RopeResult,
    ReuseResult,
    RolesResult,
    GenerateResult,
)
