"""The system C compiler: find it, compile generated C into a shared library, cache it.

The compiler is `$CC` if set, else the first of cc, gcc, clang on PATH, else `zig cc` from
the `ziglang` package if it is installed (`pip install ziglang`: a C compiler from the
package index, for machines without one). Libraries are cached under the hash of their
sources and flags in `$BLOCKSIM_CACHE_DIR/c` (default ~/.cache/blocksim/c), written
atomically, so a model compiled once loads in milliseconds in every later process.
"""
from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

from blocksim.errors import BlocksimError

log = logging.getLogger(__name__)

CACHE_ENV = "BLOCKSIM_CACHE_DIR"
FLAGS = ("-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-std=c99", "-ffp-contract=off")
SUFFIX = ".dll" if sys.platform == "win32" else ".dylib" if sys.platform == "darwin" else ".so"


class NoCompiler(BlocksimError):
    """No C compiler on this machine; the message says what to install."""


def compiler() -> list[str]:
    """The command of the C compiler to use (NoCompiler if there is none)."""
    env = os.environ.get("CC")
    if env:
        return env.split()
    for name in ("cc", "gcc", "clang"):
        found = shutil.which(name)
        if found:
            return [found]
    import importlib.util

    if importlib.util.find_spec("ziglang") is not None:
        return [sys.executable, "-m", "ziglang", "cc"]
    raise NoCompiler("no C compiler found (cc, gcc or clang); install one (e.g. `apt-get "
                     "install gcc`) or `pip install ziglang`")


def cache_dir() -> Path:
    root = os.environ.get(CACHE_ENV)
    path = (Path(root) if root else Path.home() / ".cache" / "blocksim") / "c"
    path.mkdir(parents=True, exist_ok=True)
    return path


def build(sources: dict[str, str], out: Path, defines: tuple[str, ...] = (),
          includes: tuple[Path, ...] = (), main: str | None = None) -> None:
    """Compile `sources` (file name -> text; the .c files are compiled, or only `main`,
    which includes the others) into the shared library `out` (BlocksimError with the
    compiler's first error line if it fails)."""
    import tempfile

    command = compiler()
    with tempfile.TemporaryDirectory(prefix="blocksim-cc-") as tmp:
        folder = Path(tmp)
        for name, text in sources.items():
            (folder / name).write_text(text, encoding="utf-8")
        c_files = ([str(folder / main)] if main else
                   [str(folder / name) for name in sources if name.endswith(".c")])
        tmp_out = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        args = (command + list(FLAGS) + [f"-D{d}" for d in defines]
                + [f"-I{folder}"] + [f"-I{p}" for p in includes] + c_files
                + ["-o", str(tmp_out), "-lm"])
        done = subprocess.run(args, capture_output=True, text=True)
        if done.returncode != 0:
            lines = [line for line in done.stderr.splitlines() if "error" in line] or \
                done.stderr.splitlines() or ["(no message)"]
            log.debug("compiler output:\n%s", done.stderr)
            raise BlocksimError(f"the C compiler failed: {lines[0]}")
        os.replace(tmp_out, out)


def cached_library(sources: dict[str, str], defines: tuple[str, ...] = (),
                   includes: tuple[Path, ...] = (), main: str | None = None,
                   probe: bool = False) -> Path:
    """The shared library of these sources, compiled once and kept in the cache (`main`:
    the one .c file to compile; `probe`: FileNotFoundError instead of compiling)."""
    digest = hashlib.sha256()
    for name in sorted(sources):
        digest.update(name.encode() + b"\0" + sources[name].encode() + b"\0")
    for part in defines + FLAGS + tuple(str(p) for p in includes) + tuple(compiler()):
        digest.update(part.encode() + b"\0")
    for path in includes:
        for header in sorted(path.glob("*.h")):
            digest.update(header.read_bytes())
    digest.update((main or "").encode())
    out = cache_dir() / f"bs_{digest.hexdigest()[:24]}{SUFFIX}"
    if not out.exists():
        if probe:
            raise FileNotFoundError(out)
        build(sources, out, defines, includes, main)
    return out
