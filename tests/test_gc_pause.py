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


def test_what_the_pass_made_moves_to_the_oldest_generation_unscanned(collector_on):
    before = gc.get_freeze_count()
    if before:
        pytest.skip("this process froze objects of its own")
    with gc_paused():
        made = [[i] for i in range(20_000)]
    assert gc.get_count()[0] < 1_000  # no young collection owed for the 20,000 lists
    assert gc.get_freeze_count() == 0 and gc.is_tracked(made[0])


def test_objects_someone_froze_stay_frozen(collector_on):
    if gc.get_freeze_count():
        pytest.skip("this process froze objects of its own")
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused():
            [[i] for i in range(1_000)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
