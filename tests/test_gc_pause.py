"""The collector pause of the heavy passes (blocksim.gc_pause) leaves the collector as it
found it: on after a pass that raised, off when someone else (the editor's collection
guard) had turned it off, untouched on other threads, and frozen objects frozen."""
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


def test_a_worker_thread_leaves_the_collector_alone(collector_on):
    """The switch is global: a compile in the editor's worker thread must not turn it off
    and on under the GUI thread's collection guard."""
    import threading

    seen = []
    worker = threading.Thread(target=lambda: seen.append(_enabled_inside_pause()))
    worker.start()
    worker.join()
    assert seen == [True] and gc.isenabled()


def _enabled_inside_pause() -> bool:
    with gc_paused():
        return gc.isenabled()


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
