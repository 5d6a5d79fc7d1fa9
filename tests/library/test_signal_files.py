"""FromFile's signal files are checked while they are read: a file past the numbers limit
is refused at the row that passes it (not after parsing all of it), an NPZ member before
it inflates, a CSV field or line that is too long, or not UTF-8, names its line. Large
files are made sparse (a tail of zeros the file system does not store), and peak memory is
measured in a child process."""
import json
import os
import re
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hostile.cases.signal_files import NPY_T, npy_file, with_declared_size, zip_archive

from blocksim.blocks import signal_files
from blocksim.blocks.signal_files import SignalFileError, read_signal
from blocksim.compiler import limits

ROOT = Path(__file__).resolve().parents[2]

# Reads each file named on the command line; prints, per file, the error (or "ok"), the
# seconds it took and how much the peak RSS grew.
MEASURE = """
import json, resource, sys, time
from pathlib import Path
from blocksim.blocks.signal_files import read_signal
for name in sys.argv[1:]:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.process_time()
    try:
        read_signal(Path(name))
        error = "ok"
    except Exception as exc:
        error = str(exc)
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(json.dumps([error, time.process_time() - t0, grew]))
"""


def measure(*paths: Path) -> list[tuple[str, float, float]]:
    proc = subprocess.run([sys.executable, "-c", MEASURE, *map(str, paths)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return [tuple(json.loads(line)) for line in proc.stdout.splitlines()]


def test_large_files_are_refused_early_with_little_memory(tmp_path):
    big = tmp_path / "big.csv"  # 1001 rows of 1000 numbers, then zeros up to 208 MB
    with big.open("wb") as fh:
        fh.write((b"0," * 999 + b"0\n") * 1001)
    os.truncate(big, 208 * 2**20)
    shape = tmp_path / "shape.npz"  # y's header: 400 million doubles (3.2 GB); 64 bytes
    shape.write_bytes(zip_archive({"t.npy": NPY_T,
                                   "y.npy": npy_file((400_000_000,), data=bytes(64))}))
    bomb = tmp_path / "bomb.npz"  # y declared to inflate to 3.2 GB
    bomb.write_bytes(with_declared_size(
        zip_archive({"t.npy": NPY_T, "y.npy": npy_file((2,), data=bytes(16))},
                    zipfile.ZIP_DEFLATED), "y.npy", 3_200_000_000))
    (csv_error, csv_seconds, csv_grew), (shape_error, _, shape_grew), (bomb_error, _, _) = \
        measure(big, shape, bomb)
    assert csv_error == ("line 1001 brings it to more than 1000000 numbers (rows x columns), "
                         "the most a signal file may hold")
    assert csv_grew < 60 and csv_seconds < 5  # (was 5.8 GB and 78 s for all of it)
    assert shape_error == ("array 'y' has shape (400000000,), 400000000 numbers (and 2 "
                           "times); a signal file holds at most 1000000 numbers")
    assert shape_grew < 20
    assert bomb_error.startswith("array 'y' inflates to 2.98 GiB; a signal file holds at "
                                 "most 1000000 numbers")


def test_the_numbers_limit_counts_rows_times_columns(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_TABLE_ELEMENTS", 10)
    path = tmp_path / "s.csv"
    path.write_text("time,u\n" + "".join(f"{k},{k}\n" for k in range(5)))
    assert read_signal(path)[0].tolist() == [0, 1, 2, 3, 4]  # 10 numbers: the most
    path.write_text("time,u\n" + "".join(f"{k},{k}\n" for k in range(6)))
    with pytest.raises(SignalFileError, match="^line 7 brings it to more than 10 numbers"):
        read_signal(path)
    np.savez(tmp_path / "s.npz", t=np.arange(4.0), y=np.ones((4, 2)))
    with pytest.raises(SignalFileError, match=r"array 'y' has shape \(4, 2\), 8 numbers "
                                              r"\(and 4 times\); .* at most 10 numbers"):
        read_signal(tmp_path / "s.npz")
    np.savez(tmp_path / "s.npz", t=np.arange(5.0), y=np.ones(5))
    assert read_signal(tmp_path / "s.npz")[1].shape == (5, 1)


@pytest.mark.parametrize("content, message", [
    (b"time,u\n0,1\n1," + b"9" * 200_000 + b"\n",
     "line 3: a field is longer than 131072 characters"),
    (b"time,u\n0,1\n" + b"0," * 2_200_000 + b"0\n", "line 3 is longer than 4194304 characters"),
    (b"time,u\n0,1\n1,2\n# caf\xe9\n", "line 4 is not UTF-8 text"),
])
def test_long_fields_long_lines_and_bytes_not_utf8_name_their_line(tmp_path, content,
                                                                  message):
    path = tmp_path / "s.csv"
    path.write_bytes(content)
    with pytest.raises(SignalFileError, match=f"^{message}"):
        read_signal(path)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_every_line_ending_and_a_byte_order_mark(tmp_path, newline):
    path = tmp_path / "s.csv"
    path.write_bytes(("\ufefftime,u" + newline + "# note" + newline + "0,1" + newline
                      + newline + "2,3" + newline).encode())
    times, values = read_signal(path)
    assert times.tolist() == [0, 2] and values.tolist() == [[1], [3]]


def test_npz_fortran_order_big_endian_and_compressed_arrays_read_as_numpy_does(tmp_path):
    y = np.asfortranarray(np.arange(6.0).reshape(3, 2)).astype(">f4")
    np.savez_compressed(tmp_path / "s.npz", t=np.array([0, 1, 2], dtype=np.int16), y=y)
    times, values = read_signal(tmp_path / "s.npz")
    assert times.tolist() == [0, 1, 2] and values.tolist() == y.tolist()


def _zip64_locator(raw: bytes) -> bytes:
    """The archive with a ZIP64 end record locator before its end record."""
    end = raw.rfind(b"PK\x05\x06")
    return raw[:end] + b"PK\x06\x07" + bytes(16) + raw[end:]


@pytest.mark.parametrize("raw, message", [
    (zip_archive({"t.npy": NPY_T, "y.npy": NPY_T}, zipfile.ZIP_BZIP2),
     "array 't' is compressed with bzip2"),
    (zip_archive({"t.npy": NPY_T, "y.npy": npy_file((2,), data=bytes(8))}),
     "array 'y' is cut short: its header says 16 bytes of data, the archive has 8"),
    (zip_archive({"t.npy": NPY_T, "y.npy": npy_file((2,), "|O")}),
     "array 'y' holds object values, not numbers"),
    (zip_archive({"t.npy": NPY_T, "y.npy": b"plain text"}),
     "array 'y' is not a NumPy array (.npy)"),
    (_zip64_locator(zip_archive({"t.npy": NPY_T, "y.npy": NPY_T})), "it is a ZIP64 archive"),
    (NPY_T, "it is a single .npy array"),
])
def test_npz_archives_that_cannot_be_read_safely(tmp_path, raw, message):
    path = tmp_path / "s.npz"
    path.write_bytes(raw)
    with pytest.raises(SignalFileError, match="^" + re.escape(message)):
        read_signal(path)


def test_a_large_table_of_contents_is_refused_before_zipfile_reads_it(tmp_path):
    raw = bytearray(zip_archive({"t.npy": NPY_T, "y.npy": NPY_T}))
    struct.pack_into("<L", raw, raw.rfind(b"PK\x05\x06") + 12, 0x7FFF_FFFF)
    (tmp_path / "s.npz").write_bytes(bytes(raw))
    with pytest.raises(SignalFileError, match="its table of contents is 2147483647 bytes"):
        read_signal(tmp_path / "s.npz")


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(signal_files, "MAX_FILE_BYTES", 100)
    path = tmp_path / "s.csv"
    path.write_text("time,u\n" + "0,1\n" * 30)
    with pytest.raises(OSError, match="is larger than 100 bytes"):
        read_signal(path)
