"""The analysis's errors: one line naming the file and the point, block or condition."""
from __future__ import annotations

from typing import TYPE_CHECKING

from blocksim.errors import BlocksimError

if TYPE_CHECKING:
    from blocksim.analysis.operating_point import OperatingPoint


class AnalysisError(BlocksimError):
    """A request the analysis cannot answer: an unknown analysis point, a model it cannot
    linearise (several sample rates, vector points), a model with no states where states
    are needed. The CLI prints it as one line and exits with status 2."""

    def __init__(self, message: str, file: str | None = None):
        self.file = file
        self.detail = message
        super().__init__(f"{file}: {message}" if file else message)


class OperatingPointError(AnalysisError):
    """No operating point meets the conditions (or the solver did not converge): the
    message names the worst residuals; `point` holds the best values found, with all the
    residuals (`point.report()`). The CLI exits with status 1, as for a failed run."""

    def __init__(self, message: str, point: "OperatingPoint", file: str | None = None):
        self.point = point
        super().__init__(message, file)
