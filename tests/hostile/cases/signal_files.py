"""Signal files for FromFile that are too large: refused while reading, not after.

Large inputs are made cheaply when the case's folder is made: a CSV whose rows pass the
numbers limit within its first 2 MB, followed by a sparse tail (zeros the file system does
not store) that makes it 208 MB, as the one that once took 5.8 GB and 78 s; NPZ archives
whose headers declare what they would inflate to (3 GB) without holding it. The harness
holds every case to its CPU budget and peak RSS.
"""
from __future__ import annotations

import io
import struct
import zipfile

from hostile.cases.base import BAD, DIR, Corpus, blk, doc

def npy_file(shape: tuple[int, ...], descr: str = "<f8", data: bytes = b"") -> bytes:
    """A .npy file (format 1.0) whose header says `shape`, followed by `data` only."""
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    pad = 64 - (10 + len(header) + 1) % 64
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header) + pad + 1) + header
            + b" " * pad + b"\n" + data)


NPY_T = npy_file((2,), data=struct.pack("<2d", 0.0, 1.0))  # the times 0 and 1


def zip_archive(members: dict[str, bytes], method: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as archive:
        for name, raw in members.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))  # deterministic
            info.compress_type = method
            archive.writestr(info, raw)
    return buf.getvalue()


def with_declared_size(raw: bytes, member: str, size: int) -> bytes:
    """The archive with `member`'s inflated size declared as `size` (a deflate bomb's
    honest header, without its gigabytes)."""
    data = bytearray(raw)
    name = member.encode()
    local = data.find(b"PK\x03\x04")
    while data[local + 30:local + 30 + len(name)] != name:
        local = data.find(b"PK\x03\x04", local + 4)
    struct.pack_into("<L", data, local + 22, size)
    central = data.find(b"PK\x01\x02")
    while data[central + 46:central + 46 + len(name)] != name:
        central = data.find(b"PK\x01\x02", central + 4)
    struct.pack_into("<L", data, central + 24, size)
    return bytes(data)


def _huge_directory() -> bytes:
    """An archive whose end record declares a 2 GB table of contents."""
    raw = bytearray(zip_archive({"t.npy": NPY_T, "y.npy": NPY_T}))
    end = raw.rfind(b"PK\x05\x06")
    struct.pack_into("<L", raw, end + 12, 0x7FFF_FFFF)
    return bytes(raw)


def signal_files(c: Corpus) -> None:
    cat = "signal-files"

    def case(name: str, file: str, content: bytes = b"", setup: list[tuple] | None = None,
             mentions: tuple[str, ...] = (), exits: tuple[int, ...] = BAD,
             budget: float = 5.0, unchanged: bool = True) -> None:
        d = doc([blk("f", "FromFile", file=file), blk("y", "Output")], [("f.y", "y.u")],
                stop=1.0)
        extra = {file: content} if content else {}
        for command in ("validate", "run"):
            args = ["-q", "--out", f"{DIR}/out.csv"] if command == "run" else []
            c.run_case(cat, f"{name}/{command}", d, args, command=command, exits=exits,
                       mentions=("d.json", "'f'", file, *mentions), budget=budget,
                       extra_files=extra, setup=setup,
                       unchanged=("d.json", file) if unchanged else ("d.json",))

    wide_row = b"0," * 999 + b"0\n"  # 1000 numbers
    case("csv-208MB-over-the-numbers-limit-early", "big.csv",
         setup=[("fill", "big.csv", wide_row, 1001), ("extend", "big.csv", 208 * 2**20)],
         mentions=("line 1001", "1000000 numbers"), unchanged=False)  # (not read whole)
    case("csv-field-over-128KiB", "field.csv",
         b"time,u\n0,1\n1," + b"9" * 200_000 + b"\n", mentions=("line 3", "field"))
    case("csv-line-over-4MiB", "line.csv", b"time,u\n0,1\n",
         setup=[("fill", "line.csv", b"0,", 2_200_000)], mentions=("line 3",), unchanged=False)
    case("csv-not-utf8", "latin.csv", b"time,u\n0,1\n1,\xe9\n", mentions=("line 3", "UTF-8"))
    case("csv-fits", "ok.csv", b"time,u\n0,1\n1,2\n", exits=(0,))
    case("npz-header-declares-3GB", "shape.npz",
         zip_archive({"t.npy": NPY_T, "y.npy": npy_file((400_000_000,), data=b"\0" * 64)}),
         mentions=("'y'", "400000000"))
    case("npz-member-inflates-to-3GB", "bomb.npz",
         with_declared_size(zip_archive({"t.npy": NPY_T, "y.npy": npy_file((2,), data=b"\0" * 16)},
                             zipfile.ZIP_DEFLATED), "y.npy", 3_200_000_000),
         mentions=("'y'", "inflates"))
    case("npz-bzip2-member", "bz.npz", zip_archive({"t.npy": NPY_T, "y.npy": NPY_T}, zipfile.ZIP_BZIP2),
         mentions=("bzip2",))
    case("npz-table-of-contents-2GB", "toc.npz", _huge_directory(),
         mentions=("table of contents",))
    case("npz-data-cut-short", "short.npz",
         zip_archive({"t.npy": NPY_T, "y.npy": npy_file((2,), data=b"\0" * 8)}), mentions=("cut short",))
    case("npz-object-array", "object.npz", zip_archive({"t.npy": NPY_T, "y.npy": npy_file((2,), "|O")}),
         mentions=("object",))
    case("npz-fits", "ok.npz", zip_archive({"t.npy": NPY_T, "y.npy": NPY_T}), exits=(0,))
