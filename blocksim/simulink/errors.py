"""The one error of the importer: a model file that cannot be read or translated safely."""
from __future__ import annotations

import os

from blocksim.errors import BlocksimError, shown


class SimulinkFileError(BlocksimError):
    """A Simulink file refused or unreadable; the message is one line naming the file."""

    def __init__(self, path: str | os.PathLike, message: str):
        self.path = os.fspath(path)
        super().__init__(f"{shown(self.path, 200)}: {message}")
