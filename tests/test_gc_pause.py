"""The collector pause of the heavy passes (blocksim.gc_pause) leaves the collector as it
found it: on after a pass that raised, and off when someone else (the editor's collection
guard) had turned it off."""
import gc

import pytest

from blocksim.gc_pause import gc_paused, without_gc


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_paused_inside_and_on_again_after_an_error(collector_on):
    @without_gc
    def failing():
        assert not gc.isenabled()
        raise ValueError("bad diagram")

    with pytest.raises(ValueError, match="bad diagram"):
        failing()
    assert gc.isenabled()


def test_a_collector_turned_off_by_someone_else_stays_off(collector_on):
    gc.disable()
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
    assert not gc.isenabled()
