"""Python files of user block types (issue 25): a diagram's code runs only when trusted,
and then exactly the bytes that were hashed; `blocksim trust` and the allow-list never hang,
never trace back, never lose or invent entries.

Every case has its own allow-list (@DIR@/allow.json). Code that must never run creates the
marker file PWNED beside itself (the path is computed at run time, so the same payload also
works compiled into a .pyc).
"""
from __future__ import annotations

import importlib.util
import marshal

from hostile.cases.base import BAD, DIR, Case, Corpus, blk, doc, dumps

ENV = {"BLOCKSIM_TRUST_LIST": f"{DIR}/allow.json"}
PAYLOAD = ("import os\n"
           "open(os.path.join(os.path.dirname(__file__), 'PWNED'), 'w').close()\n")


def _blocks(type_name: str) -> str:
    """A Python file declaring one user block type (a constant 1)."""
    return (f"from blocksim.blocktypes.blockspec import Port\n"
            f"from blocksim.user import UserBlock\n\n\n"
            f"class {type_name}(UserBlock):\n"
            f"    name = '{type_name}'\n"
            f"    outputs = (Port('y'),)\n"
            f"    feedthrough_outputs = False\n\n"
            f"    @staticmethod\n"
            f"    def out(t, x, d, u, p):\n"
            f"        return (1.0,)\n\n\n"
            f"BLOCK_TYPES = ({type_name},)\n")


def _diagram(type_name: str, python: list[str]) -> bytes:
    return dumps({**doc([blk("u", type_name), blk("y", "Output")], [("u.y", "y.u")],
                        stop=0.1), "python": python})


def _unchecked_pyc(code: str, source: str) -> bytes:
    """A __pycache__ file Python's import system would run without looking at the source."""
    flags = (1).to_bytes(4, "little")  # hash-based, check_source off
    return (importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(source.encode())
            + marshal.dumps(compile(code, "blocks.py", "exec")))


def user_code(c: Corpus) -> None:
    cat = "trust"
    evil = PAYLOAD + _blocks("HostileEvil")
    untrusted = {"d.json": _diagram("HostileEvil", ["blocks.py"]), "blocks.py": evil.encode()}
    for command in ("validate", "run"):
        c.add(Case(f"{cat}/untrusted/{command}", cat, [command, f"{DIR}/d.json"],
                   files=untrusted, env=ENV, exits=BAD, mentions=("blocks.py", "--trust"),
                   unchanged=("d.json", "blocks.py")))
    c.add(Case(f"{cat}/untrusted/api", cat, api={"op": "load", "path": f"{DIR}/d.json"},
               files=untrusted, env=ENV, exits=BAD))

    good = _blocks("HostileShippedPyc")
    cache = importlib.util.cache_from_source("blocks.py")
    c.add(Case(f"{cat}/shipped-pyc/validate", cat,
               ["validate", f"{DIR}/d.json", "--trust", f"{DIR}/blocks.py"],
               files={"d.json": _diagram("HostileShippedPyc", ["blocks.py"]),
                      "blocks.py": good.encode(),
                      cache: _unchecked_pyc(PAYLOAD + good, good)},
               env=ENV, exits=(0,), unchanged=(cache,),
               note="the import system would run the unchecked-hash pyc, not the .py"))

    c.add(Case(f"{cat}/names-a-pyc/validate", cat, ["validate", f"{DIR}/d.json"],
               files={"d.json": _diagram("HostileEvil", ["comp.pyc"]),
                      "comp.pyc": _unchecked_pyc(evil, evil)},
               env=ENV, exits=BAD, mentions=("comp.pyc", "only .py files")))
    c.add(Case(f"{cat}/names-a-fifo/validate", cat,
               ["validate", f"{DIR}/d.json", "--trust", f"{DIR}/pipe.py"],
               files={"d.json": _diagram("HostileEvil", ["pipe.py"])}, setup=[("fifo", "pipe.py")],
               env=ENV, exits=BAD, mentions=("pipe.py", "FIFO"), keep_fifo=("pipe.py",)))

    # the allow-list itself: not a regular file, not UTF-8, not the format
    lists = {
        "fifo": ({}, [("fifo", "allow.json")], "FIFO"),
        "directory": ({}, [("mkdir", "allow.json")], "directory"),
        "dev-zero": ({}, [("symlink", "allow.json", "/dev/zero")], "character device"),
        "not-utf8": ({"allow.json": b"\xff\xfe{\x00"}, [], "UTF-8"),
        "truncated-json": ({"allow.json": b'{"format": "blocksim-trusted-python", "fi'}, [],
                           "JSON"),
        "wrong-json": ({"allow.json": b'{"files": ["a.py"]}'}, [], "allow-list"),
        "bad-digest": ({"allow.json": b'{"format": "blocksim-trusted-python", "version": 1, '
                                      b'"files": {"/a.py": "sha"}}'}, [], "SHA-256"),
        "old-lines-garbage": ({"allow.json": b"\x01\x02 not a list\n"}, [], "line 1"),
        "huge": ({}, [("sparse", "allow.json", 9 * 2**20)], "larger than"),
    }
    for name, (files, setup, word) in lists.items():
        keep = ("allow.json",) if name in ("fifo", "dev-zero") else ()
        same = ("allow.json",) if files else ()
        c.add(Case(f"{cat}/allow-list-{name}/validate", cat, ["validate", f"{DIR}/d.json"],
                   files={**untrusted, **files}, setup=setup, env=ENV, exits=BAD,
                   mentions=("allow.json", word), unchanged=same, keep_fifo=keep))
        c.add(Case(f"{cat}/allow-list-{name}/trust", cat, ["trust", f"{DIR}/blocks.py"],
                   files={**untrusted, **files}, setup=setup, env=ENV, exits=BAD,
                   mentions=("allow.json", word), unchanged=same, keep_fifo=keep,
                   note="a list blocksim cannot read is never overwritten"))

    # `blocksim trust` on what is not a Python source file
    targets = {
        "fifo": ("pipe.py", {}, [("fifo", "pipe.py")], "FIFO"),
        "dev-zero": ("/dev/zero", {}, [], "only .py files"),
        "symlink-to-dev-zero": ("zero.py", {}, [("symlink", "zero.py", "/dev/zero")],
                                "character device"),
        "directory": ("folder.py", {}, [("mkdir", "folder.py")], "directory"),
        "huge": ("big.py", {}, [("sparse", "big.py", 5 * 2**20)], "larger than"),
        "pyc": ("comp.pyc", {"comp.pyc": _unchecked_pyc(evil, evil)}, [], "only .py files"),
        "missing": ("missing.py", {}, [], "does not exist"),
        "nul-in-path": ("a\x00.py", {}, [], "a"),
    }
    for name, (target, files, setup, word) in targets.items():
        path = target if target.startswith("/") else f"{DIR}/{target}"
        c.add(Case(f"{cat}/trust-{name}", cat, ["trust", path], files=files, setup=setup,
                   env=ENV, exits=BAD, mentions=(word,),
                   keep_fifo=("pipe.py",) if name == "fifo" else (), budget=5.0))
