"""Ranking: features per candidate, the heuristic floor, the gated learned model, feedback.

``RankerArea`` (``mem.ranker``) is the entry point; see :mod:`engine.rank.service`.
"""

from .service import FeedbackError, FeedbackResult, RankerArea, RankerStatus

__all__ = ["FeedbackError", "FeedbackResult", "RankerArea", "RankerStatus"]
