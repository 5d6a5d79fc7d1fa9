"""Shipped examples by name: the CLI, `blocksim.load`, `DiagramBuilder.load` and sweeps
resolve a name the same way (blocksim.diagram.examples.diagram_path)."""
from __future__ import annotations

import shutil

import pytest

import blocksim
from blocksim.diagram.examples import diagram_path, examples_dir, find_example


def test_load_takes_an_examples_name_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("bouncing_ball", "bouncing_ball.json"):
        diagram = blocksim.load(name)
        assert diagram.path == examples_dir() / "bouncing_ball.json"
        assert {b.id for b in diagram.blocks} >= {"ball"}
    assert blocksim.DiagramBuilder.load("math003").model.path == find_example("math003")


def test_a_file_of_that_name_wins_over_the_example(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(find_example("math003"), tmp_path / "bouncing_ball")
    assert diagram_path("bouncing_ball") == tmp_path.joinpath("bouncing_ball").relative_to(
        tmp_path)
    assert blocksim.load("bouncing_ball").path.name == "bouncing_ball"


def test_an_unknown_name_says_where_to_look(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(blocksim.DiagramFileError) as info:
        blocksim.load("no_such_example")
    assert str(info.value) == ("no_such_example: no such file, and no example of that name "
                               "(see `blocksim examples`)")
    with pytest.raises(blocksim.DiagramFileError, match=r"^sub/gone.json: no such file, and "
                                                        r"no example of that name$"):
        blocksim.load("sub/gone.json")
