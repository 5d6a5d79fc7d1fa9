"""Files a diagram writes (issue 25: a diagram someone sends you must not change your files).

Each case's diagram lies in a project folder `proj/` of the case folder, as a cloned
project would; the files beside `proj/` stand for the user's own (~/.bashrc, their data).
They must stay byte-identical or never appear, and a refusal is exit 2 with one line
naming the block or option and the file, before anything runs: the `--out` file of the
run (or the sweep's table) is never written either. The cases that are allowed (inside the
folder, or `--allow-write`) run, so the rule is not a refusal of everything.
"""
from __future__ import annotations

from hostile.cases.base import BAD, Case, Corpus, DIR, blk, doc, dumps

CAT = "writes"
PROJ = f"{DIR}/proj"
DIAGRAM = f"{PROJ}/d.json"
USERS = b"the user's own file, not to be touched\n"
DATA = b"time,y\n0,1\n1,2\n"
COMMANDS = ("run", "validate", "sweep", "api")


def writer(*files: str, reader: str | None = None, python: str | None = None,
           inside: str = "", ids: str = "writer") -> dict:
    """A diagram whose ToFile blocks `writer`, `writer2`, ... (or `ids`, ...) write
    `files` (the constant k, a swept parameter), a FromFile `reader` reading `reader`;
    `inside`: the first ToFile sits in a subsystem `sub`. (tests/test_write_rule.py builds
    its projects from it too.)"""
    source = blk("src", "FromFile", file=reader) if reader else blk("src", "Constant",
                                                                      value="k")
    blocks, wires = [source], []
    for i, name in enumerate(files):
        bid = ids if i == 0 else f"{ids}{i + 1}"
        if i == 0 and inside:
            blocks.append({"id": "sub", "type": "Subsystem", "params": {}, "diagram": {
                "blocks": [blk("u", "Inport"), blk(bid, "ToFile", file=name)],
                "wires": [{"src": "u.y", "dst": f"{bid}.u"}]}})
            wires.append(("src.y", "sub.u"))
        else:
            blocks.append(blk(bid, "ToFile", file=name))
            wires.append(("src.y", f"{bid}.u"))
    if not files:
        blocks.append(blk("y", "Output"))
        wires.append(("src.y", "y.u"))
    d = doc(blocks, wires, {"k": 1.0}, stop=1.0, output_interval=0.5)
    if python:
        d["python"] = [python]
    return d


def python_blocks(name: str) -> bytes:
    """A file of user block types (one type, `name`: unique per case, as every case of a
    worker process shares the registry)."""
    return (f"from blocksim.blocktypes.blockspec import Port\n"
            f"from blocksim.user import UserBlock\n\n\n"
            f"class {name}(UserBlock):\n"
            f"    name = '{name}'\n"
            f"    outputs = (Port('y'),)\n\n"
            f"    @staticmethod\n"
            f"    def out(t, x, d, u, p):\n"
            f"        return (1.0,)\n\n\n"
            f"BLOCK_TYPES = ({name},)\n").encode()


def argv_of(command: str, diagram: str, extra: tuple[str, ...]) -> list[str]:
    if command == "run":
        return ["run", diagram, "-q", "--out", f"{PROJ}/r.csv", *extra]
    if command == "sweep":
        return ["sweep", diagram, "-q", "--grid", "k=1:2:2", "--workers", "1",
                "--out", f"{PROJ}/s.csv", *extra]
    return ["validate", diagram, *extra]


def case(c: Corpus, name: str, data: dict, *, exits=BAD, mentions=(), setup=(),
         unchanged=(), absent=(), extra=(), files=None, commands=COMMANDS,
         diagram="d.json", keep_fifo=(), note="") -> None:
    """One situation through the commands: the diagram at proj/`diagram`; `unchanged`
    and `absent` are paths in the case folder; a refused run or sweep writes no results."""
    path = f"{PROJ}/{diagram}"
    every = {f"proj/{diagram}": dumps(data), **(files or {})}
    keep = (f"proj/{diagram}", *unchanged)
    for command in commands:
        code = exits[command] if isinstance(exits, dict) else exits
        if command not in ("run", "sweep", "validate", "api") or code is None:
            continue
        results = {"run": ("proj/r.csv",), "sweep": ("proj/s.csv",)}.get(command, ())
        gone = absent + (results if code == BAD else ())
        if command == "api":
            c.add(Case(f"{CAT}/{name}/api", CAT, api={"op": "simulate", "path": path,
                                                       "params": {}, "settings": {}},
                       files=every, setup=list(setup), exits=code, unchanged=keep,
                       absent=gone, keep_fifo=keep_fifo, note=note))
            continue
        c.add(Case(f"{CAT}/{name}/{command}", CAT, argv_of(command, path, extra),
                   files=every, setup=list(setup), exits=code,
                   mentions=mentions if code == BAD else (), unchanged=keep, absent=gone,
                   keep_fifo=keep_fifo, budget=10.0, note=note))


def writes(c: Corpus) -> None:
    users = {"victim.csv": USERS}
    # ----- out of the folder: refused unless allowed -----
    case(c, "symlink-out-of-the-project", writer("results.csv"), files=users,
         setup=[("symlink", "proj/results.csv", "../victim.csv")],
         mentions=("writer", "results.csv", "victim.csv", "--allow-write"),
         unchanged=("victim.csv",), note="a cloned repo's results.csv -> ../../.bashrc")
    case(c, "dangling-symlink-out", writer("results.csv"),
         setup=[("symlink", "proj/results.csv", "../new.csv")],
         mentions=("writer", "results.csv"), absent=("new.csv",))
    case(c, "absolute-path", writer(f"{DIR}/victim.csv"), files=users,
         mentions=("writer", "victim.csv"), unchanged=("victim.csv",))
    case(c, "absolute-path-new-file", writer(f"{DIR}/new.csv"),
         mentions=("writer", "new.csv"), absent=("new.csv",))
    case(c, "dotdot", writer("../victim.csv"), files=users,
         mentions=("writer", "../victim.csv"), unchanged=("victim.csv",))
    case(c, "dotdot-through-a-subfolder", writer("sub/../../victim.csv"), files=users,
         setup=[("mkdir", "proj/sub")], mentions=("writer",), unchanged=("victim.csv",))
    case(c, "symlinked-folder-out", writer("out/victim.csv"), files=users,
         setup=[("symlink", "proj/out", "..")], mentions=("writer", "out/victim.csv"),
         unchanged=("victim.csv",))
    case(c, "in-a-subsystem", writer("../victim.csv", inside="sub"), files=users,
         mentions=("sub/writer", "../victim.csv"), unchanged=("victim.csv",))
    case(c, "second-block-out", writer("ok.csv", "../victim.csv"), files=users,
         mentions=("writer2", "victim.csv"), unchanged=("victim.csv",),
         absent=("proj/ok.csv",))
    case(c, "allowed-another-file", writer("../victim.csv"), files=users,
         extra=("--allow-write", f"{DIR}/other.csv"), commands=("run", "validate", "sweep"),
         mentions=("writer",), unchanged=("victim.csv",))
    case(c, "allowed-a-subfolder-only", writer("../victim.csv"), files=users,
         extra=("--allow-write", f"{PROJ}/sub"), setup=[("mkdir", "proj/sub")],
         commands=("run", "validate"), mentions=("writer",), unchanged=("victim.csv",))
    # ----- onto what the run reads or writes: refused whatever is allowed -----
    case(c, "onto-the-diagram-by-symlink", writer("results.csv"),
         setup=[("symlink", "proj/results.csv", "d.json")], mentions=("writer", "diagram"))
    case(c, "onto-the-diagram-d-csv", writer("d.csv"), diagram="d.csv",
         mentions=("writer", "d.csv", "diagram"))
    case(c, "onto-the-diagram-allowed", writer("d.csv"), diagram="d.csv",
         extra=("--allow-write", PROJ), commands=("run", "validate", "sweep"),
         mentions=("writer", "diagram"))
    case(c, "onto-its-fromfile-input", writer("data.csv", reader="data.csv"),
         files={"proj/data.csv": DATA}, mentions=("writer", "src"),
         unchanged=("proj/data.csv",))
    case(c, "onto-its-fromfile-input-by-symlink", writer("copy.csv", reader="data.csv"),
         files={"proj/data.csv": DATA}, setup=[("symlink", "proj/copy.csv", "data.csv")],
         mentions=("writer", "src"), unchanged=("proj/data.csv",))
    case(c, "two-blocks-one-file", writer("o.csv", "./o.csv"),
         mentions=("writer", "writer2"), absent=("proj/o.csv",))
    case(c, "two-blocks-one-file-by-symlink", writer("o.csv", "p.csv"),
         setup=[("symlink", "proj/p.csv", "o.csv")], mentions=("writer", "writer2"),
         absent=("proj/o.csv",))
    case(c, "onto-a-fifo", writer("results.csv"), setup=[("fifo", "proj/results.csv")],
         mentions=("writer", "fifo"), keep_fifo=("proj/results.csv",),
         note="writing a FIFO nobody reads would never end")
    trusted = ("--trust", f"{PROJ}/blocks.py")
    for command in ("run", "validate", "sweep"):
        own = f"WriteRuleBlocks{command.title()}"
        case(c, f"onto-the-trusted-python-file-{command}", writer("blocks.csv",
                                                                    python="blocks.py"),
             files={"proj/blocks.py": python_blocks(own)}, extra=trusted,
             setup=[("symlink", "proj/blocks.csv", "blocks.py")], commands=(command,),
             mentions=("writer", "blocks.py"), unchanged=("proj/blocks.py",))
    # ----- the user's outputs onto what the run reads or writes -----
    reader = writer(reader="data.csv")
    data = {"proj/data.csv": DATA}
    for option in ("--out", "--events"):
        case(c, f"{option[2:]}-onto-its-fromfile-data", reader, files=data,
             extra=(option, f"{PROJ}/data.csv"), commands=("run",),
             mentions=(option, "data.csv", "src"), unchanged=("proj/data.csv",))
        case(c, f"{option[2:]}-onto-a-tofile-file", writer("o.csv"),
             extra=(option, f"{PROJ}/o.csv"), commands=("run",),
             mentions=(option, "o.csv", "writer"), absent=("proj/o.csv",))
    case(c, "out-onto-its-fromfile-data-by-symlink", reader, files=data,
         setup=[("symlink", "proj/link.csv", "data.csv")],
         extra=("--out", f"{PROJ}/link.csv"), commands=("run",),
         mentions=("--out", "src"), unchanged=("proj/data.csv",))
    c.add(Case(f"{CAT}/sweep-out-onto-its-fromfile-data", CAT,
               ["sweep", DIAGRAM, "-q", "--grid", "k=1:2:2", "--workers", "1", "--out",
                f"{PROJ}/data.csv"], files={"proj/d.json": dumps(reader), **data},
               exits=BAD, mentions=("--out", "src"), unchanged=("proj/data.csv",),
               budget=10.0))
    c.add(Case(f"{CAT}/sweep-out-onto-a-tofile-file", CAT,
               ["sweep", DIAGRAM, "-q", "--grid", "k=1:2:2", "--workers", "1",
                "--allow-write", f"{PROJ}/o.csv", "--out", f"{PROJ}/o.csv"],
               files={"proj/d.json": dumps(writer("o.csv"))}, exits=BAD,
               mentions=("--out", "writer"), absent=("proj/o.csv",), budget=10.0))
    for command in ("run", "sweep"):
        own = f"WriteRuleOut{command.title()}"
        py = {"proj/blocks.py": python_blocks(own)}
        out = f"{PROJ}/blocks.py"
        argv = (["run", DIAGRAM, "-q", "--out", out, *trusted] if command == "run" else
                ["sweep", DIAGRAM, "-q", "--grid", "k=1:2:2", "--workers", "1", "--out",
                 out, *trusted])
        c.add(Case(f"{CAT}/{command}-out-onto-the-trusted-python-file", CAT, argv,
                   files={"proj/d.json": dumps(writer(python="blocks.py")), **py},
                   exits=BAD, mentions=("--out", "blocks.py"),
                   unchanged=("proj/blocks.py", "proj/d.json"), budget=10.0))
    # ----- allowed: inside the folder, or said so -----
    sweep_refused = {"run": (0,), "validate": (0,), "sweep": BAD, "api": (0,)}
    case(c, "inside-the-folder", writer("ok.csv"), exits=sweep_refused,
         mentions=("writer", "--allow-write"))
    case(c, "inside-a-subfolder", writer("out/ok.csv"), setup=[("mkdir", "proj/out")],
         exits=sweep_refused, mentions=("writer",))
    case(c, "symlink-inside-the-folder", writer("results.csv"),
         setup=[("symlink", "proj/results.csv", "real/results.csv"), ("mkdir", "proj/real")],
         exits=sweep_refused, mentions=("writer",))
    case(c, "inside-allowed-in-a-sweep", writer("ok.csv"),
         extra=("--allow-write", f"{PROJ}/ok.csv"), exits=(0,),
         commands=("sweep", "run", "validate"))
    case(c, "absolute-allowed-file", writer(f"{DIR}/victim.csv"), files=users,
         extra=("--allow-write", f"{DIR}/victim.csv"), exits=(0,),
         commands=("run", "validate", "sweep"))
    case(c, "dotdot-allowed-folder", writer("../new.csv"), extra=("--allow-write", DIR),
         exits=(0,), commands=("run", "validate", "sweep"))
