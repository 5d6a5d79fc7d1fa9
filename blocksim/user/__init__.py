"""Block types written in Python: subclass `UserBlock` (docs/python.md)."""
from blocksim.user.block import UserBlock
from blocksim.user.declare import (CONTINUE, TERMINATE, Crossing, Discrete, State, change,
                                   falling, negative, positive, rising)
from blocksim.user.trust import UntrustedCodeError

__all__ = ["UserBlock", "State", "Discrete", "Crossing", "CONTINUE", "TERMINATE",
           "positive", "negative", "rising", "falling", "change", "UntrustedCodeError"]
