"""Tells in one line why the editor cannot open a window (no display, a system library missing
for Qt's platform plugin), instead of Qt's many lines and an abort (exit status 134).

`missing_display` is checked before Qt starts. Failures only Qt can find (the plugin does
not load, the display does not answer) arrive as Qt's fatal message while the application
is being created; `explain_platform_failure` turns the messages before it into the line,
prints it and ends the process with status 2, before Qt would abort.
"""
from __future__ import annotations

import ctypes
import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Mapping

log = logging.getLogger(__name__)

EXIT_NO_DISPLAY = 2
RENDER_HINT = "or use `blocksim render DIAGRAM --out FILE.png` for pictures"


def missing_display(env: Mapping[str, str] | None = None, platform: str | None = None
                    ) -> str | None:
    """Why no window can open, if that is certain before Qt starts (Linux and other X11/
    Wayland systems with neither DISPLAY nor WAYLAND_DISPLAY set, and no QT_QPA_PLATFORM
    chosen); None otherwise."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if platform.startswith(("win", "darwin", "cygwin")) or env.get("QT_QPA_PLATFORM"):
        return None
    if env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return None
    return ("no display to open the editor on: DISPLAY and WAYLAND_DISPLAY are not set; set "
            "DISPLAY, run it under Xvfb (xvfb-run blocksim gui), " + RENDER_HINT)


def explain(messages: list[str], env: Mapping[str, str] | None = None) -> str:
    """One line saying why Qt could not start, from its messages up to the fatal one."""
    env = os.environ if env is None else env
    text = "\n".join(messages)
    # A plugin that lacks system libraries is said first: with several plugin folders, Qt
    # may go on to another copy that loads and then fails to reach the display.
    found = re.search(r'Could not load the Qt platform plugin "([^"]+)" in "([^"]*)" even '
                      r"though it was found", text)
    if found:
        name, folder = found.groups()
        missing = missing_libraries(plugin_file(name, folder))
        if "xcb-cursor0" in text and "libxcb-cursor.so.0" not in missing:
            missing.append("libxcb-cursor.so.0")  # Qt checks this one itself and names it
        if missing:
            packages = " ".join(dict.fromkeys(debian_package(lib) for lib in missing))
            return (f"cannot open a window: Qt's {name} platform plugin needs system "
                    f"libraries that are missing: {', '.join(missing)} (on Debian/Ubuntu: "
                    f"apt install {packages}); " + RENDER_HINT)
    connect = re.search(r"could not connect to display ?(\S*)", text)
    if connect:
        shown = connect.group(1) or env.get("DISPLAY", "")
        return (f"cannot open a window: could not connect to display {shown}; check DISPLAY "
                f"(or run under Xvfb), " + RENDER_HINT)
    if found:
        return (f"cannot open a window: Qt's {found.group(1)} platform plugin does not load "
                f"(run with QT_DEBUG_PLUGINS=1 to see why); " + RENDER_HINT)
    absent = re.search(r'Could not find the Qt platform plugin "([^"]+)" in "([^"]*)"', text)
    if absent:
        return (f"cannot open a window: Qt's platform plugin '{absent.group(1)}' is not "
                f"installed (in '{absent.group(2)}'); reinstall PySide6, " + RENDER_HINT)
    first = next((m.strip().splitlines()[0] for m in reversed(messages) if m.strip()),
                 "Qt could not start")
    return f"cannot open a window: {first}; " + RENDER_HINT


def explain_platform_failure(messages: list[str]) -> None:
    """Qt's fatal message while creating the application: say why in one line, exit 2."""
    line = explain(messages)
    log.debug("Qt could not start:\n%s", "\n".join(messages))
    print(f"blocksim: {line}", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(EXIT_NO_DISPLAY)  # Qt aborts as soon as we return


def plugin_file(name: str, folder: str = "") -> Path:
    """The shared library of Qt platform plugin `name` (folder "" means Qt's own)."""
    if not folder:
        from PySide6.QtCore import QLibraryInfo

        folder = str(Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath))
                     / "platforms")
    return Path(folder) / f"libq{name}.so"


def missing_libraries(plugin: Path) -> list[str]:
    """Libraries the plugin needs that the system lacks (by ldd, else by loading it)."""
    if shutil.which("ldd"):
        try:
            out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True,
                                 timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        names = re.findall(r"^\s*(\S+) => not found", out, re.MULTILINE)
        if names:
            return list(dict.fromkeys(names))
    try:
        ctypes.CDLL(str(plugin))
    except OSError as exc:
        first = str(exc).split(":", 1)[0].strip()
        return [first] if first and first != str(plugin) else []
    return []


def debian_package(library: str) -> str:
    """The usual Debian/Ubuntu package of a shared library: libxcb-icccm.so.4 ->
    libxcb-icccm4, libxkbcommon-x11.so.0 -> libxkbcommon-x11-0 (a guess for a hint)."""
    match = re.match(r"(.+?)\.so\.(\d+)", library)
    if not match:
        return library
    base, version = match.group(1).lower(), match.group(2)
    return f"{base}-{version}" if base[-1].isdigit() else f"{base}{version}"
