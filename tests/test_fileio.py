"""Atomic writes keep the old file on failure and clean up after saves that were killed."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from blocksim.files.interrupts import interrupts_deferred
from blocksim.files.safe import atomic_write, read_regular_file, remove_stale_temporaries

# A save that is killed after its temporary file exists and before the rename.
KILLED_SAVE = """
import sys, time
from blocksim.files.safe import atomic_write
def write(fh):
    fh.write("partial " * 100000)
    fh.flush()
    print("writing", flush=True)
    time.sleep(60)
atomic_write(sys.argv[1], write)
"""


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "keep.csv"
    target.write_text("old\n")

    def fail(fh) -> None:
        fh.write("new, half written")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        atomic_write(target, fail)
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.csv"]


def test_saves_killed_with_sigkill_leave_nothing_behind_after_the_next_save(tmp_path: Path) -> None:
    target = tmp_path / "d.json"
    target.write_text("good\n")
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", KILLED_SAVE, str(target)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "writing"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        # Each save removed the temporary file of the one killed before it.
        orphans = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        assert len(orphans) == 1 and target.read_text() == "good\n"
    atomic_write(target, lambda fh: fh.write("saved\n"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.json"]
    assert target.read_text() == "saved\n"


def test_temporaries_of_live_processes_and_of_other_files_are_kept(tmp_path: Path) -> None:
    target = tmp_path / "r.csv"
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        stale = tmp_path / f".r.csv.{dead_pid()}.0123abcd.tmp"
        busy = tmp_path / f".r.csv.{live.pid}.89abcdef.tmp"
        other = tmp_path / f".r.csv.old.{dead_pid()}.0123abcd.tmp"  # belongs to r.csv.old
        unrelated = tmp_path / ".r.csv.notes"
        for path in (stale, busy, other, unrelated):
            path.write_text("x")
        assert remove_stale_temporaries(target) == 1
        assert not stale.exists() and busy.exists() and other.exists() and unrelated.exists()
    finally:
        live.kill()
        live.wait()


def test_reads_refuse_what_is_not_a_regular_file(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(OSError, match="FIFO"):
        read_regular_file(pipe, 100)
    with pytest.raises(OSError, match="larger than 3 bytes"):
        (tmp_path / "f").write_text("1234")
        read_regular_file(tmp_path / "f", 3)
    assert read_regular_file(tmp_path / "f", 4) == b"1234"


def test_a_device_is_written_to_never_replaced(tmp_path: Path) -> None:
    # `--out /dev/null`: a regular file must never take the device node's place.
    atomic_write("/dev/null", lambda fh: fh.write("results\n"))
    assert Path("/dev/null").is_char_device()
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    reader = subprocess.Popen(["cat", str(pipe)], stdout=subprocess.PIPE, text=True)
    atomic_write(pipe, lambda fh: fh.write("through the pipe\n"))
    assert reader.communicate(timeout=10)[0] == "through the pipe\n"
    assert pipe.is_fifo()


def test_an_interrupt_inside_interrupts_deferred_comes_after_the_block():
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            steps.append("finished the write")  # the handler has run by now: held back
        steps.append("not reached")
    assert steps == ["finished the write"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
