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
    bad = imported_after("import blocksim, blocksim.cli, blocksim.blocks, blocksim.compiler, "
                         "blocksim.engine, blocksim.format, blocksim.registry; "
                         "blocksim.registry.all_types()",
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


@pytest.mark.parametrize("name", ["model", "format", "fileio", "schema_check", "errors",
                                  "examples"])
def test_the_model_and_the_file_format_do_not_know_the_engine(name):
    imported = imports_of(ROOT / "blocksim" / f"{name}.py")
    upward = {m for m in imported
              if m.startswith(("blocksim.engine", "blocksim.compiler", "blocksim.api",
                               "blocksim.gui", "blocksim.cli"))}
    assert upward == set()


def test_the_readme_lists_every_block_type_and_example():
    from blocksim import registry
    from blocksim.examples import example_paths

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [name for name in registry.all_types() if f"`{name}`" not in readme]
    assert missing == []
    assert [p.name for p in example_paths() if f"diagrams/{p.name}" not in readme] == []
