"""Dependencies run one way: GUI -> engine -> compiler -> model. Nothing outside blocksim/gui
imports Qt (the headless core must run on a server), and the diagram model and file format
know nothing of compiling or simulating."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def imported_after(statement: str, families: tuple[str, ...]) -> list[str]:
    """Modules of `families` (prefixes) that `statement` imports, in a fresh interpreter."""
    code = (f"import sys; {statement}; "
            f"print([m for m in sys.modules if m.startswith({families!r})])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return eval(done.stdout)  # a list of module names printed by our own code


def test_core_and_cli_do_not_import_qt():
    bad = imported_after("import blocksim, blocksim.cli.main, blocksim.blocks, blocksim.compiler, "
                         "blocksim.engine, blocksim.diagram.format, blocksim.blocktypes.registry; "
                         "blocksim.blocktypes.registry.all_types()",
                         ("PySide6", "pyqtgraph", "shiboken6", "PyQt5", "PyQt6"))
    assert bad == []


def imports_of(module: Path) -> set[str]:
    """Every module a source file imports, at the top or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


LOWER_PARTS = ["diagram", "files", "expressions", "blocktypes"]
LOWER_MODULES = sorted(str(p.relative_to(ROOT)) for part in LOWER_PARTS
                       for p in (ROOT / "blocksim" / part).glob("*.py")) + ["blocksim/errors.py"]


@pytest.mark.parametrize("path", LOWER_MODULES)
def test_the_diagram_its_file_and_block_declarations_do_not_know_the_engine(path):
    """The diagram and its file, the expression language and block declarations sit below
    the compiler and the engine: none of their modules imports upward."""
    imported = imports_of(ROOT / path)
    upward = {m for m in imported
              if m.startswith(("blocksim.engine", "blocksim.compiler", "blocksim.api",
                               "blocksim.gui", "blocksim.cli", "blocksim.sweeps"))}
    assert upward == set()


def test_the_readme_lists_every_block_type_and_example():
    from blocksim.blocktypes import registry
    from blocksim.diagram.examples import example_name, example_paths

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [name for name in registry.all_types() if f"`{name}`" not in readme]
    assert missing == []
    files = [f"diagrams/{example_name(p)}.json" for p in example_paths()]
    assert any("/" in name[len("diagrams/"):] for name in files)  # topic folders are listed
    assert [name for name in files if name not in readme] == []
