"""The simulation engine: steppers, event location and the hybrid run loop."""
from blocksim.engine.results import Event, Results
from blocksim.engine.simulator import Simulator

__all__ = ["Event", "Results", "Simulator"]
