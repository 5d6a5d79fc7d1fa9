"""Read the parts of a Simulink model file, bounded: the .slx zip package, a classic text
.mdl, or a newer .mdl whose text wraps the same XML parts (__MWOPC_PART_BEGIN__).

A model from someone else may be hostile: a zip bomb, a member named ../../x, a 1 GB XML
part. Nothing is extracted to disk; each member's declared size, its compression ratio and
the bytes actually inflated are checked against limits before and while it is read, so a
header that lies about the size is caught too.
"""
from __future__ import annotations

import base64
import binascii
import os
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from blocksim.files.safe import FileTooLarge, NotARegularFile, read_regular_file, why_unreadable
from blocksim.simulink.errors import SimulinkFileError

MAX_FILE = 256 * 2**20       # the model file itself (a zip or a text .mdl)
MAX_PART = 64 * 2**20        # one part, uncompressed (the largest real blockdiagram.xml: a few MB)
MAX_TOTAL = 256 * 2**20      # every part read, uncompressed
MAX_RATIO = 200              # uncompressed / compressed for a part over 1 MiB (XML: 5-30)
MAX_MEMBERS = 10_000

# the model workspace's data: a MAT-file (before R2019b) or a MAT record stream (after)
WORKSPACE_PARTS = ("simulink/modelworkspace.mat", "simulink/modelworkspace.mxarray")

OPC_PACKAGE = "__MWOPC_PACKAGE_BEGIN__"
OPC_PART = "__MWOPC_PART_BEGIN__"


@dataclass
class ModelFile:
    """What a model file holds: its XML parts by name (an .slx or a wrapped .mdl), or the text
    of a classic .mdl."""

    path: Path
    kind: str                        # "slx", "mdl-xml" (wrapped parts) or "mdl" (classic text)
    parts: dict[str, bytes] = field(default_factory=dict)
    text: str = ""


def read_model_file(path: str | os.PathLike) -> ModelFile:
    """The parts of `path`; SimulinkFileError (one line naming the file) if it cannot be
    read safely."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".slx", ".mdl"):
        raise SimulinkFileError(path, "is not a Simulink model (expected .slx or .mdl)")
    try:
        raw = read_regular_file(path, MAX_FILE)
    except (OSError, ValueError) as exc:
        if isinstance(exc, (FileTooLarge, NotARegularFile)):
            raise SimulinkFileError(path, why_unreadable(exc, MAX_FILE)) from None
        raise SimulinkFileError(path, why_unreadable(exc, MAX_FILE)) from None
    if raw[:4] == b"PK\x03\x04" or (suffix == ".slx" and raw[:2] == b"PK"):
        return ModelFile(path, "slx", parts=_zip_parts(path, raw))
    if suffix == ".slx":
        raise SimulinkFileError(path, "is not a zip package (an .slx file is one)")
    text = _decode_text(raw)
    if OPC_PACKAGE in text or OPC_PART in text:
        return ModelFile(path, "mdl-xml", parts=_text_parts(path, text))
    return ModelFile(path, "mdl", text=text)


_ENCODINGS = {"ibm-1386_p100-2002": "gbk", "gbk": "gbk", "windows-1252": "cp1252",
              "ibm-5348_p100-1997": "cp1252", "shift_jis": "shift_jis", "utf-8": "utf-8",
              "iso-8859-1": "latin-1", "us-ascii": "ascii", "ibm-943_p15a-2003": "shift_jis",
              "euc-kr": "euc_kr", "windows-1251": "cp1251"}


def _decode_text(raw: bytes) -> str:
    """A classic .mdl's text in the encoding it says it was saved in (SavedCharacterEncoding:
    GBK, windows-1252, UTF-8 are all seen), else UTF-8, else Latin-1."""
    import re
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    match = re.search(rb'SavedCharacterEncoding\s+"?([\w.:-]+)', raw[:8192])
    encodings = ["utf-8", "latin-1"]
    if match:
        named = match.group(1).decode("ascii", "replace").lower()
        encodings.insert(0, _ENCODINGS.get(named, named))
    for encoding in encodings:
        try:
            return raw.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
    return raw.decode("latin-1")


def _safe_member_name(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return not (name.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]
                or "\x00" in name)


def _zip_parts(path: Path, raw: bytes) -> dict[str, bytes]:
    """The package's members that matter (XML parts), each read with a bound."""
    import io
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise SimulinkFileError(path, f"is not a readable zip package ({exc})") from None
    if len(infos) > MAX_MEMBERS:
        raise SimulinkFileError(path, f"has {len(infos)} zip members (at most {MAX_MEMBERS})")
    parts: dict[str, bytes] = {}
    total = 0
    for info in infos:
        name = info.filename
        if not _safe_member_name(name):
            raise SimulinkFileError(path, f"zip member '{name}' has a path outside the "
                                          "package (refused)")
        if name.endswith("/") or not (name.lower().endswith((".xml", ".rels"))
                                      or name.lower() in WORKSPACE_PARTS):
            continue  # thumbnails, other binary parts: not read
        if info.file_size > MAX_PART:
            raise SimulinkFileError(path, f"zip member '{name}' would be {info.file_size:,} "
                                          f"bytes uncompressed (at most {MAX_PART:,})")
        if info.file_size > 2**20 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise SimulinkFileError(path, f"zip member '{name}' is compressed "
                                          f"{info.file_size // max(info.compress_size, 1):,} "
                                          "to 1 (a zip bomb; refused)")
        data = _read_member(path, archive, info)
        total += len(data)
        if total > MAX_TOTAL:
            raise SimulinkFileError(path, f"its parts exceed {MAX_TOTAL:,} bytes uncompressed")
        parts["/" + name.lstrip("/")] = data
    return parts


def _read_member(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """At most MAX_PART bytes of one member: a header that understates the size is caught
    while inflating, not after."""
    try:
        with archive.open(info) as fh:
            chunks, size = [], 0
            while True:
                chunk = fh.read(1 << 20)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_PART:
                    raise SimulinkFileError(path, f"zip member '{info.filename}' inflates "
                                                  f"to more than {MAX_PART:,} bytes (refused)")
                chunks.append(chunk)
            return b"".join(chunks)
    except SimulinkFileError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError,
            RuntimeError, ValueError) as exc:
        raise SimulinkFileError(path, f"zip member '{info.filename}' cannot be read "
                                      f"({exc})") from None


def _text_parts(path: Path, text: str) -> dict[str, bytes]:
    """The parts of a text OPC package: `__MWOPC_PART_BEGIN__ /name` starts one; a part
    marked BASE64 is binary (decoded, bounded); the stub `Model { }` before them is skipped."""
    parts: dict[str, bytes] = {}
    name, binary, lines = None, False, []

    def finish() -> None:
        if name is None:
            return
        body = "\n".join(lines)
        if binary:
            try:
                data = base64.b64decode("".join(body.split()), validate=False)
            except (binascii.Error, ValueError):
                data = b""
        else:
            data = body.encode("utf-8")
        if len(data) > MAX_PART:
            raise SimulinkFileError(path, f"part '{name}' is larger than {MAX_PART:,} bytes")
        parts[name] = data

    for line in text.splitlines():
        if line.startswith(OPC_PART):
            finish()
            words = line[len(OPC_PART):].split()
            name = words[0] if words else ""
            if not name.startswith("/"):
                name = "/" + name
            if not _safe_member_name(name.lstrip("/")):
                raise SimulinkFileError(path, f"part '{name}' has a path outside the package")
            binary = any("BASE64" in word.upper() for word in words[1:])
            lines = []
        elif line.startswith("__MWOPC_"):
            finish()
            name, lines = None, []
        elif name is not None:
            lines.append(line)
    finish()
    if not parts:
        raise SimulinkFileError(path, "has an __MWOPC package with no parts")
    return parts
