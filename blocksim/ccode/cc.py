"""The system C compiler: find it, compile generated C into a shared library, cache it.

The compiler is `$CC` if set, else the first of cc, gcc, clang on PATH, else `zig cc` from
the `ziglang` package if it is installed (`pip install ziglang`: a C compiler from the
package index, for machines without one). Libraries are cached under the hash of their
sources and flags in `$BLOCKSIM_CACHE_DIR/c` (default ~/.cache/blocksim/c), written
atomically, so a model compiled once loads in milliseconds in every later process.

Two sets of flags: `FLAGS` (portable, -O2) for what leaves the machine (an FMU's binary),
and `NATIVE_FLAGS` (-O3 -march=native) for a library loaded only by this machine's
processes (the C backend): its stage loops vectorise with the CPU's widest instructions,
which halves the 100-lag chain's call. Such a library's cache key holds the CPU's identity
(`cpu_identity`), so a home directory shared with another machine never loads it there.
Both keep -ffp-contract=off: no fused multiply-adds, so the arithmetic is the Python
backend's operation for operation (vectorising an element-wise loop changes no rounding;
without -ffast-math no sum is reordered).
"""
from __future__ import annotations

import hashlib
import logging
import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from blocksim.errors import BlocksimError

log = logging.getLogger(__name__)

CACHE_ENV = "BLOCKSIM_CACHE_DIR"
FLAGS = ("-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-std=c99", "-ffp-contract=off")
NATIVE_FLAGS = ("-O3", "-march=native") + FLAGS[1:]
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


@functools.lru_cache(maxsize=1)
def cpu_identity() -> str:
    """What `-march=native` compiles for: the CPU's model and feature flags (Linux:
    /proc/cpuinfo's first processor; elsewhere the platform's own description)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 20).split("\n\n", 1)[0]
    except OSError:
        text = ""
    wanted = ("vendor_id", "model name", "cpu family", "model", "flags", "features",
              "cpu implementer", "cpu part", "isa", "cpu")
    lines = sorted(line.strip() for line in text.splitlines()
                   if line.split(":", 1)[0].strip().lower() in wanted)
    if lines:
        return "\n".join(lines)
    import platform

    return f"{platform.machine()} {platform.processor()} {platform.platform()}"


def build(sources: dict[str, str], out: Path, defines: tuple[str, ...] = (),
          includes: tuple[Path, ...] = (), main: str | None = None,
          native: bool = False) -> None:
    """Compile `sources` (file name -> text; the .c files are compiled, or only `main`,
    which includes the others) into the shared library `out` (BlocksimError with the
    compiler's first error line if it fails); `native`: for this machine's CPU only
    (NATIVE_FLAGS; the portable flags where the compiler refuses them)."""
    try:
        _build(sources, out, defines, includes, main, NATIVE_FLAGS if native else FLAGS)
    except BlocksimError:
        if not native:
            raise
        log.debug("native flags refused; compiling with the portable ones")
        _build(sources, out, defines, includes, main, FLAGS)


def _build(sources: dict[str, str], out: Path, defines: tuple[str, ...],
           includes: tuple[Path, ...], main: str | None, flags: tuple[str, ...]) -> None:
    import tempfile

    command = compiler()
    with tempfile.TemporaryDirectory(prefix="blocksim-cc-") as tmp:
        folder = Path(tmp)
        for name, text in sources.items():
            (folder / name).write_text(text, encoding="utf-8")
        c_files = ([str(folder / main)] if main else
                   [str(folder / name) for name in sources if name.endswith(".c")])
        tmp_out = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        args = (command + list(flags) + [f"-D{d}" for d in defines]
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
                   probe: bool = False, native: bool = False) -> Path:
    """The shared library of these sources, compiled once and kept in the cache (`main`:
    the one .c file to compile; `probe`: FileNotFoundError instead of compiling;
    `native`: for this machine's CPU, see `build`)."""
    digest = hashlib.sha256()
    for name in sorted(sources):
        digest.update(name.encode() + b"\0" + sources[name].encode() + b"\0")
    flags = NATIVE_FLAGS + (cpu_identity(),) if native else FLAGS
    for part in defines + flags + tuple(str(p) for p in includes) + tuple(compiler()):
        digest.update(part.encode() + b"\0")
    for path in includes:
        for header in sorted(path.glob("*.h")):
            digest.update(header.read_bytes())
    digest.update((main or "").encode())
    out = cache_dir() / f"bs_{digest.hexdigest()[:24]}{SUFFIX}"
    if not out.exists():
        if probe:
            raise FileNotFoundError(out)
        build(sources, out, defines, includes, main, native)
    return out
