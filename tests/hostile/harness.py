"""Run one hostile case in this process and check it against the documented contract.

CLI cases call `blocksim.cli.main.main(argv)` with stdout/stderr captured (Python-level and the
file descriptor 2, so C-level output counts too), warnings shown as a real process would show
them, and logging handlers rebuilt per case. API cases call blocksim.load / compile / simulate.
A per-case time limit (hostile.deadline: CPU seconds, and three times that in wall seconds
for code that blocks) raises CaseTimeout, a BaseException the library cannot swallow with
`except Exception`. The outcome is a plain dict (JSON-safe) with
the list of contract violations ("symptoms"), each a short fixed text so they group well.
"""
from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import resource
import shutil
import stat
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

from hostile.corpus import DIR, Case, materialize, substitute
from hostile.deadline import time_limit

MAX_MESSAGE = 600  # characters of an error line, once the case folder is shortened
RSS_LIMIT_MB = int(os.environ.get("HOSTILE_RSS_LIMIT_MB", "1500"))

# Python's and numpy's exception class names: one of these in a user-facing message means an
# internal error leaked through (blocksim's own error classes are fine, and never named).
_LEAKY = re.compile(
    r"\b(ValueError|KeyError|TypeError|IndexError|AttributeError|ZeroDivisionError|"
    r"OverflowError|RuntimeError|AssertionError|NameError|RecursionError|MemoryError|"
    r"UnboundLocalError|FloatingPointError|LinAlgError|NotImplementedError|OSError|"
    r"IsADirectoryError|FileNotFoundError|PermissionError|NotADirectoryError|"
    r"UnicodeEncodeError|UnicodeDecodeError|UnicodeError|SyntaxError|StopIteration|"
    r"ArithmeticError|LookupError|BlockingIOError|SystemError|Exception)\b")
_ARGPARSE_LAST = re.compile(r"^blocksim( [a-z]+)?: error: ")
_WARNING = re.compile(r"\b\w*Warning\b: ")  # Python's warnings.showwarning format
_QT = re.compile(r"^\s*(Q[A-Z]\w*::|qt\.[a-z]+|QObject|QWidget)")


class CaseTimeout(BaseException):
    """The case used up its budget (CPU seconds; wall seconds: three times that)."""


def _where(exc: BaseException) -> str:
    """module:line of the innermost frame inside blocksim (the module at fault)."""
    frames = traceback.extract_tb(exc.__traceback__)
    inside = [f for f in frames if "blocksim" in f.filename or "/blocks/" in f.filename]
    frame = (inside or frames or [None])[-1]
    if frame is None:
        return "?"
    path = frame.filename
    for marker in ("/blocksim/", "/blocks/"):
        if marker in path:
            path = path[path.rindex(marker) + 1:]
            break
    else:
        path = os.path.basename(path)
    return f"{path}:{frame.lineno}"


def _reset_peak_rss() -> bool:
    """Reset this process's peak RSS (Linux: /proc/self/clear_refs); False if impossible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mb() -> float:
    """Peak RSS since the last reset (VmHWM), else since the process started."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _snapshot(folder: Path, names: tuple[str, ...]) -> dict[str, bytes | None]:
    out = {}
    for name in names:
        try:
            out[name] = (folder / name).read_bytes()
        except OSError:
            out[name] = None
    return out


@contextlib.contextmanager
def _captured_fd2():
    """Point file descriptor 2 at a temporary file for the duration; yields a reader."""
    tmp = tempfile.TemporaryFile()
    saved = os.dup(2)
    os.dup2(tmp.fileno(), 2)
    box: dict[str, bytes] = {}
    try:
        yield box
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        tmp.seek(0)
        box["data"] = tmp.read(1 << 20)
        tmp.close()


def _reset_logging() -> None:
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.setLevel(logging.WARNING)


def run_cli(argv: list[str], budget: float) -> dict[str, Any]:
    """blocksim.cli.main.main(argv) as a process would run it: exit status, stderr, exception."""
    from blocksim.cli.main import main

    _reset_logging()
    err, out = io.StringIO(), _Bounded()
    result: dict[str, Any] = {"exit": None, "exception": None, "where": None}
    with _captured_fd2() as fd2, warnings.catch_warnings():
        warnings.simplefilter("default")
        old_err, old_out = sys.stderr, sys.stdout
        sys.stderr, sys.stdout = err, out
        t0 = time.monotonic()
        try:
            with time_limit(budget, CaseTimeout):
                code = main(argv)
            result["exit"] = code if isinstance(code, int) else ("non-int", repr(code))
        except SystemExit as exc:
            code = exc.code
            if code is None:
                code = 0
            elif not isinstance(code, int):
                err.write(f"{code}\n")
                code = 1
            result["exit"] = code
        except CaseTimeout:
            result["exit"] = "timeout"
        except MemoryError as exc:
            result["exit"] = "memory"
            result["where"] = _where(exc)
        except BaseException as exc:  # noqa: BLE001 - what a real process would print
            result["exit"] = "uncaught"
            result["exception"] = f"{type(exc).__name__}: {_short(str(exc))}"
            result["where"] = _where(exc)
            err.write("Traceback (most recent call last):\n" + "".join(
                traceback.format_exception_only(type(exc), exc)))
        finally:
            sys.stderr, sys.stdout = old_err, old_out
        result["elapsed"] = time.monotonic() - t0
    result["stderr"] = err.getvalue() + fd2.get("data", b"").decode("utf-8", "replace")
    return result


class _Bounded(io.StringIO):
    """A stdout that keeps only the first megabyte (a huge table must not eat memory)."""

    def write(self, text: str) -> int:
        if self.tell() < (1 << 20):
            return super().write(text[: 1 << 20])
        return len(text)


def run_api(api: dict[str, Any], budget: float) -> dict[str, Any]:
    """blocksim.load then simulate (or compile): which exception, from which step."""
    import blocksim
    from blocksim.errors import BlocksimError, DiagramFileError, SimulationError

    result: dict[str, Any] = {"exit": None, "exception": None, "where": None, "stderr": "",
                              "step": None}
    t0 = time.monotonic()
    step = "load"
    try:
        with time_limit(budget, CaseTimeout):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                diagram = blocksim.load(api["path"])
                if api["op"] in ("compile", "simulate"):
                    step = api["op"]
                    if api["op"] == "compile":
                        blocksim.compile(diagram, api.get("params") or None,
                                         **api.get("settings", {}))
                    else:
                        blocksim.simulate(diagram, params=api.get("params") or None,
                                          **api.get("settings", {}))
        result["exit"] = 0
    except CaseTimeout:
        result["exit"] = "timeout"
    except MemoryError as exc:
        result["exit"] = "memory"
        result["where"] = _where(exc)
    except BlocksimError as exc:
        allowed = DiagramFileError if step == "load" else BlocksimError
        result["stderr"] = str(exc)
        result["exception"] = type(exc).__name__
        if not isinstance(exc, allowed):
            result["exit"] = "wrong-class"
            result["where"] = _where(exc)
        else:
            result["exit"] = 1 if isinstance(exc, SimulationError) else 2
    except BaseException as exc:  # noqa: BLE001
        result["exit"] = "uncaught"
        result["exception"] = f"{type(exc).__name__}: {_short(str(exc))}"
        result["where"] = _where(exc)
    result["elapsed"] = time.monotonic() - t0
    result["step"] = step
    return result


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def check(case: Case, result: dict[str, Any], folder: Path, before: dict[str, bytes | None]
          ) -> list[str]:
    """The contract violations of one finished case, as short fixed texts."""
    symptoms: list[str] = []
    code = result["exit"]
    root = str(folder)
    if code == "timeout":
        symptoms.append(f"hang: over the budget ({case.budget:g} s of CPU or "
                        f"{3 * case.budget:g} s of wall time)")
    elif code == "memory":
        symptoms.append(f"memory: MemoryError at {result['where']}")
    elif code == "uncaught":
        symptoms.append(f"traceback: {result['exception'].split(':')[0]} at {result['where']}")
    elif code == "wrong-class":
        symptoms.append(f"api: {result['step']} raised {result['exception']} "
                        f"(not allowed there) at {result['where']}")
    elif not isinstance(code, int) or code not in (0, 1, 2):
        symptoms.append(f"exit status {code!r} outside 0/1/2")
    elif code not in case.exits:
        want = "/".join(map(str, case.exits))
        symptoms.append(f"exit status {code}, contract says {want}")

    text = result.get("stderr") or ""
    lines = [line for line in text.splitlines() if line.strip()]
    is_error = isinstance(code, int) and code != 0
    if "Traceback" in text and code != "uncaught":
        symptoms.append("traceback printed on stderr")
    argparse_usage = (code == 2 and case.kind == "cli" and lines
                      and lines[0].startswith("usage:") and _ARGPARSE_LAST.match(lines[-1]))
    if isinstance(code, int):
        if any(_WARNING.search(line) for line in lines):
            symptoms.append("warning printed on stderr")
        elif any(_QT.match(line) for line in lines):
            symptoms.append("Qt messages printed on stderr")
        elif is_error and not lines:
            symptoms.append("no error message")
        elif is_error and len(lines) > 1 and not argparse_usage:
            if any(line.startswith("blocksim: warning:") for line in lines[:-1]):
                symptoms.append("several lines on stderr: a warning before the error")
            else:
                symptoms.append("several lines on stderr")
        message = lines[-1] if lines else ""
        shown = _without_arguments(message, case, root)
        leak = _LEAKY.search(shown)
        if leak and is_error:
            symptoms.append(f"exception name in message: {leak.group(1)}")
        if len(shown) > MAX_MESSAGE:
            symptoms.append("message longer than 600 characters")
        if is_error and not argparse_usage:
            lowered = message.lower()
            for word in case.mentions:
                if substitute(word, root).lower() not in lowered:
                    symptoms.append("message does not name " + _kind_of(word))
    if case.kind == "api" and isinstance(code, int) and code != 0 and "\n" in text.strip():
        symptoms.append("api: multi-line error message")
    after = _snapshot(folder, tuple(before))
    for name, old in before.items():
        if old is not None and after[name] != old:
            symptoms.append("data loss: an input file was changed")
    for name in case.absent:
        if os.path.lexists(folder / name):
            symptoms.append("a file was written where the write rule forbids it")
    for name in case.keep_fifo:
        try:
            mode = os.lstat(folder / name).st_mode
            if stat.S_ISREG(mode):
                symptoms.append("data loss: a FIFO or device was replaced by a file")
        except OSError:
            symptoms.append("data loss: a FIFO or device was removed")
    if (folder / "PWNED").exists():
        symptoms.append("CODE EXECUTION: the marker file was created")
    if result.get("rss_mb", 0) > RSS_LIMIT_MB:
        symptoms.append(f"memory: peak RSS over {RSS_LIMIT_MB} MB")
    return list(dict.fromkeys(symptoms))


def _without_arguments(message: str, case: Case, root: str) -> str:
    """The message with the user's own long arguments (paths, names) cut out: only what
    blocksim adds counts towards the length limit."""
    given = substitute(case.argv if case.argv is not None else [case.api.get("path", "")],
                       root)
    for arg in sorted((a for a in given if len(a) > 20), key=len, reverse=True):
        message = message.replace(arg, "<arg>")
    return message.replace(root, DIR)


def _kind_of(word: str) -> str:
    """Group 'does not name' symptoms by what was missing."""
    if word.endswith((".json", ".csv", ".png", ".svg", ".npz")) or "/" in word:
        return "the file"
    if word.startswith("--") or word in ("rtol", "atol", "stop", "step", "interval", "set"):
        return "the option"
    return "the block/parameter"


def run_case(case: Case, workroot: Path) -> dict[str, Any]:
    """Create the case's folder, run it, check it, remove the folder; the outcome dict."""
    folder = workroot / re.sub(r"[^A-Za-z0-9_.-]+", "_", case.id)[:120]
    if folder.exists():
        _remove(folder)
    folder.mkdir(parents=True)
    root = str(folder)
    outcome: dict[str, Any] = {"id": case.id, "category": case.category}
    try:
        materialize(case, folder)
        before = _snapshot(folder, case.unchanged)
        rss_before = _peak_rss_mb() if not _reset_peak_rss() else 0.0
        saved_env = {key: os.environ.get(key) for key in case.env}
        os.environ.update(substitute(case.env, root))
        try:
            if case.kind == "cli":
                result = run_cli(substitute(case.argv, root), case.budget)
            else:
                result = run_api(substitute(case.api, root), case.budget)
        finally:
            for key, value in saved_env.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        rss = _peak_rss_mb()
        result["rss_mb"] = rss if rss > rss_before else 0.0  # without a reset: only a new peak
        outcome.update(result)
        try:
            outcome["symptoms"] = check(case, result, folder, before)
        except Exception as exc:  # noqa: BLE001 - a bug of this harness, not of blocksim
            outcome["symptoms"] = [f"harness error: {type(exc).__name__}: {exc}"]
    finally:
        _remove(folder)
    outcome["stderr"] = _short((outcome.get("stderr") or "").replace(root, DIR), 400)
    return outcome


def _remove(folder: Path) -> None:
    """Remove a case folder, whatever permissions the case left on it."""
    for top, dirs, files in os.walk(folder, followlinks=False):
        for name in dirs + files:
            path = os.path.join(top, name)
            with contextlib.suppress(OSError):
                if not os.path.islink(path):
                    os.chmod(path, 0o755 if name in dirs else 0o644)
    with contextlib.suppress(OSError):
        os.chmod(folder, 0o755)
    shutil.rmtree(folder, ignore_errors=True)
