"""Analysis > Linearize and Analysis > Operating Point (issue 29) against stand-ins for
blocksim.linearize and blocksim.operating_point that keep the library's contract: the dialogs
pass the marked points, show the Bode plot with margins, the step response, poles and zeros
and the matrices, export them, say failures in a message box, and write an operating point
as the initial values in one undo step."""
import json
import math

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

import blocksim  # noqa: E402
from blocksim.errors import CompileError  # noqa: E402


class StandIn:
    """A linear model as blocksim.linearize returns it without python-control."""

    def __init__(self, A, B, C, D, states, inputs, outputs, dt=0):
        self.A, self.B, self.C, self.D = map(np.atleast_2d, (A, B, C, D))
        self.states, self.inputs, self.outputs, self.dt = states, inputs, outputs, dt


def loop_model(inputs, outputs):
    """4 / (s + 1)^3 between any points: gain margin 2 (6.02 dB) at sqrt(3) rad/s."""
    A = [[-1, 1, 0], [0, -1, 1], [0, 0, -1]]
    return StandIn(A, [[0], [0], [4]], [[1, 0, 0]], [[0]], ["a", "b", "c"], inputs, outputs)


@pytest.fixture
def calls(monkeypatch):
    seen = []

    def linearize(model, *, inputs, outputs, at=None, **options):
        seen.append({"inputs": inputs, "outputs": outputs, "at": at, **options})
        return loop_model(inputs, outputs)
    monkeypatch.setattr(blocksim, "linearize", linearize, raising=False)
    return seen


def mark(window, src, *roles):
    from blocksim.diagram.model import PortRef
    from blocksim.gui.document.commands import SetAnalysisMarks

    window.doc.push(SetAnalysisMarks(window.doc, (), PortRef.parse(src), roles, "mark"))


def linearized(window, qtbot):
    """Analysis > Linearize, as the menu triggers it; the dialog once computed."""
    window.actions_.linearize.trigger()
    dialog = window.linearize_dialog
    qtbot.addWidget(dialog)
    assert dialog.task.wait(30)
    return dialog


def test_the_analysis_menu_offers_linearize_and_operating_point(window):
    menus = {m.title().replace("&", ""): m for m in window.menuBar().findChildren(
        type(window.recent_menu)) if m.title()}
    texts = [a.text().replace("&", "") for a in menus["Analysis"].actions()]
    assert texts == ["Linearize…", "Operating Point…"]


def test_linearize_without_marks_says_how_to_mark(window, env, calls):
    from blocksim.gui.analysis.menu import open_analysis

    assert open_analysis(window, "linearize") is None
    assert env and env[-1][0] == "Linearize" and "right-click a wire" in env[-1][1]
    mark(window, "sum.y", "input")
    assert open_analysis(window, "linearize") is None
    assert "output" in env[-1][1]
    assert calls == []


def test_the_dialog_shows_bode_margins_step_and_poles_of_the_marked_pair(window, qtbot,
                                                                         calls, tmp_path):
    mark(window, "sum.y", "input")
    mark(window, "integ.y", "output")
    dialog = linearized(window, qtbot)
    assert calls == [{"inputs": ["sum.y"], "outputs": ["integ.y"], "at": None,
                      "open_loops": []}]
    assert dialog.pair_choice.currentText() == "sum.y → integ.y"
    assert "3 states, continuous" in dialog.status.text()
    # Bode: 4/(s+1)^3 is 12.04 dB at low frequency, the phase starts at 0 and falls to -270°
    magnitude, phase = dialog.bode.curves["sum.y → integ.y"]
    w = dialog.bode.w
    assert w[0] == pytest.approx(0.01) and w[-1] == pytest.approx(100)  # 2 decades around -1
    assert np.allclose(magnitude, 20 * np.log10(4 / (1 + w ** 2) ** 1.5), atol=1e-9)
    assert np.allclose(phase, -3 * np.degrees(np.arctan(w)), atol=1e-9)  # 0 to -270°
    # the library's margins (blocksim.analysis.response: found on a grid, to ~1e-5)
    assert dialog.margins.gain_margin_db == pytest.approx(20 * math.log10(2), rel=1e-4)
    assert dialog.margins.phase_crossover == pytest.approx(math.sqrt(3), rel=1e-4)
    summary = dialog.summary.text()
    assert "Gain margin: 6.021 dB at 1.732 rad/s" in summary and "stable" in summary
    assert dialog.step.y[-1] == pytest.approx(4, rel=0.02)  # shown until settled
    assert np.allclose(np.sort(dialog.pole_zero.poles.real), [-1, -1, -1], atol=1e-4)
    assert "A =" in dialog.matrices.toPlainText()

    from blocksim.gui.window import dialogs
    for suffix in (".npz", ".json", ".mat"):
        path = tmp_path / f"plant{suffix}"
        dialogs_save = dialogs.save_path
        dialogs.save_path = lambda *a, **k: str(path)
        try:
            dialog.export()
        finally:
            dialogs.save_path = dialogs_save
        assert path.exists()
    # the layouts of `blocksim linearize --json` and `--mat`
    saved = json.loads((tmp_path / "plant.json").read_text())
    assert saved["inputs"] == ["sum.y"] and saved["A"][0] == [-1, 1, 0]
    assert saved["at"] == "initial" and saved["poles"] == [[-1, 0]] * 3
    with np.load(tmp_path / "plant.npz") as arrays:
        assert arrays["B"][2, 0] == 4 and list(arrays["OutputName"]) == ["integ.y"]
        assert arrays["Ts"] == 0
    import scipy.io
    mat = scipy.io.loadmat(tmp_path / "plant.mat")
    assert mat["C"].tolist() == [[1, 0, 0]] and mat["StateName"][2, 0][0] == "c"


def test_a_loop_transfer_point_takes_the_margins_of_minus_g(window, qtbot, calls):
    mark(window, "integ.y", "input", "output", "open")
    dialog = linearized(window, qtbot)
    assert calls[-1]["open_loops"] == ["integ.y"]
    # every tab shows L = -G: the phase of -4/(s+1)^3 starts at -180°, the step goes to -4
    magnitude, phase = dialog.bode.curves["L at integ.y (−G)"]
    w = dialog.bode.w
    assert np.allclose(phase, -180 - 3 * np.degrees(np.arctan(w)), atol=1e-9)
    assert dialog.step.y[-1] == pytest.approx(-4, rel=0.02)
    assert "of the loop transfer L = −G" in dialog.summary.text()


def test_a_refused_linearization_is_a_message_not_a_traceback(window, qtbot, env,
                                                              monkeypatch):
    def refuse(model, **arguments):
        raise CompileError("linearize: no port 'nope' on block 'sum'")
    monkeypatch.setattr(blocksim, "linearize", refuse, raising=False)
    mark(window, "sum.y", "input")
    mark(window, "integ.y", "output")
    dialog = linearized(window, qtbot)
    assert env[-1] == ("Cannot linearize", "linearize: no port 'nope' on block 'sum'")
    assert "Cannot linearize" in dialog.status.text() and dialog.result is None
    assert not dialog.export_button.isEnabled()


class Point:
    """An OperatingPoint as the library promises it."""

    def __init__(self, converged=True):
        self.states = {"integ.x": 1.5}
        self.inputs, self.outputs, self.discrete = {}, {"y": 1.5}, {}
        self.residuals = {"integ.x": 1e-13 if converged else 0.4}
        self.converged = converged
        self.unwritten = ["lag"]  # say, a TransferFunction: no parameter starts its state
        self.worst = ("d integ.x/dt", self.residuals["integ.x"])
        self.tolerance = 1e-9

    def report(self):
        return "integ.x = 1.5" if self.converged else "did not converge"

    def apply_to(self, diagram):
        diagram.block("integ").params["x0"] = 1.5  # as the library would
        return [("integ", "x0", np.float64(1.5))]


def test_the_operating_point_is_written_as_initial_values_in_one_undo_step(
        window, qtbot, monkeypatch):
    from blocksim.gui.analysis.menu import open_analysis

    monkeypatch.setattr(blocksim, "operating_point", lambda model, check: Point(), raising=False)
    dialog = open_analysis(window, "operating_point")
    qtbot.addWidget(dialog)
    assert dialog.task.wait(30)
    cells = [[dialog.table.item(r, c).text() for c in range(3)]
             for r in range(dialog.table.rowCount())]
    assert ["state", "integ.x", "1.5"] in cells and ["residual", "integ.x", "1e-13"] in cells
    assert dialog.write_button.isEnabled()
    doc = window.doc
    depth = doc.undo_stack.count()
    dialog.write_button.click()
    assert doc.diagram.block("integ").params["x0"] == 1.5
    assert type(doc.diagram.block("integ").params["x0"]) is float  # JSON-ready
    assert doc.undo_stack.count() == depth + 1
    assert "Edit > Undo takes it back" in dialog.status.text()
    assert "No block parameter starts the state of lag" in dialog.status.text()
    doc.undo_stack.undo()
    assert doc.diagram.block("integ").params["x0"] == 0


def test_a_trim_that_does_not_converge_is_said_and_cannot_be_written(window, qtbot, env,
                                                                     monkeypatch):
    from blocksim.gui.analysis.menu import open_analysis

    monkeypatch.setattr(blocksim, "operating_point", lambda model, check: Point(False),
                        raising=False)
    dialog = open_analysis(window, "operating_point")
    qtbot.addWidget(dialog)
    assert dialog.task.wait(30)
    assert env[-1][0] == "Operating point" and "do not hold" in env[-1][1]
    assert not dialog.write_button.isEnabled()
    assert ("The conditions do not hold</span>: the largest residual is 0.4 (d integ.x/dt), "
            "above the tolerance 1e-09" in dialog.status.text())


# ----- with the library's own linearize and operating_point, on the DC motor example -----

def open_motor(window, qtbot):
    from blocksim.diagram.examples import example_paths

    path = next(p for p in example_paths() if p.name == "dc_motor_pid.json")
    assert window.files.open_path(str(path))
    return window.doc.diagram


def test_the_motor_plant_from_voltage_to_speed_is_the_analytic_model(window, qtbot):
    diagram = open_motor(window, qtbot)
    mark(window, "pid.u", "input", "open")
    mark(window, "speed.y", "output")
    dialog = linearized(window, qtbot)
    assert dialog.result is not None, dialog.status.text()
    p = diagram.parameters
    R, L, Ke, J, B, Kt = (p[k] for k in ("R", "L", "Ke", "J", "B", "Kt"))
    motor = np.array([[-R / L, -Ke / L], [Kt / J, -B / J]])
    # the pair shown is the motor alone (an opened loop may leave the PID's states in the
    # model, unseen at speed.y): its poles and DC gain are the analytic model's
    poles = np.sort_complex(dialog.pole_zero.poles)
    assert np.allclose(poles, np.sort_complex(np.linalg.eigvals(motor)), rtol=1e-9, atol=0)
    assert dialog.pole_zero.zeros.size == 0
    dc = Kt / (R * B + Kt * Ke)
    assert f"DC gain: {dc:.6g}" in dialog.summary.text()
    w = dialog.bode.w
    s = 1j * w
    analytic = Kt / ((L * s + R) * (J * s + B) + Kt * Ke)  # speed / voltage
    magnitude, phase = dialog.bode.curves["pid.u → speed.y"]
    assert np.allclose(magnitude, 20 * np.log10(np.abs(analytic)), atol=1e-9)
    assert dialog.model_names() == (["pid.u"], ["speed.y"])
    assert "loop opened at pid.u" in dialog.status.text()


def test_the_motor_loop_at_its_operating_point_has_the_librarys_margins(window, qtbot):
    control = pytest.importorskip("control")
    diagram = open_motor(window, qtbot)
    mark(window, "pid.u", "input", "output", "open")
    dialog = linearized(window, qtbot)
    # at the initial values the PID saturates (error 50 rad/s): nothing comes back around
    assert "The transfer is zero" in dialog.summary.text() and dialog.margins is None
    assert "latched mode" in dialog.status.text()
    dialog.at_choice.setCurrentIndex(1)  # at the operating point: the PID no longer saturated
    assert dialog.task.wait(30)
    assert "at the operating point" in dialog.status.text()
    at = blocksim.operating_point(diagram)
    loop = -blocksim.linearize(diagram, inputs=["pid.u"], outputs=["pid.u"],
                               open_loops=["pid.u"], at=at)
    gm, pm, wpc, wgc = control.margin(loop)
    assert dialog.margins.phase_margin_deg == pytest.approx(pm, rel=1e-4)
    assert dialog.margins.gain_crossover == pytest.approx(wgc, rel=1e-4)
    assert "of the loop transfer L = −G" in dialog.summary.text()


def test_the_motor_operating_point_dialog_shows_the_trim(window, qtbot):
    from blocksim.gui.analysis.menu import open_analysis

    diagram = open_motor(window, qtbot)
    dialog = open_analysis(window, "operating_point")
    qtbot.addWidget(dialog)
    assert dialog.task.wait(30)
    cells = {(dialog.table.item(r, 0).text(), dialog.table.item(r, 1).text()):
             dialog.table.item(r, 2).text() for r in range(dialog.table.rowCount())}
    assert float(cells[("state", "speed")]) == pytest.approx(50)  # the set point at t = 0
    assert float(cells[("output", "w")]) == pytest.approx(50)
    assert any(kind == "residual" for kind, _ in cells)
    assert "converged" in dialog.report.toPlainText()
    assert dialog.status.text().startswith("Operating point found: the largest residual is")
    pytest.importorskip("blocksim.analysis.initial_values")
    dialog.write_button.click()
    assert diagram.block("speed").params.get("x0") == pytest.approx(50)
    window.doc.undo_stack.undo()
    assert diagram.block("speed").params.get("x0", 0) == 0


def test_an_export_that_cannot_be_written_is_a_message(window, qtbot, env, calls, tmp_path,
                                                       monkeypatch):
    from blocksim.gui.window import dialogs

    mark(window, "sum.y", "input")
    mark(window, "integ.y", "output")
    dialog = linearized(window, qtbot)
    for path, says in ((tmp_path / "missing" / "m.json", "cannot write"),
                       (tmp_path / "m.txt", "unknown file type '.txt'")):
        monkeypatch.setattr(dialogs, "save_path", lambda *a, p=path, **k: str(p))
        dialog.export()
        assert env[-1][0] == "Cannot export the model"
        assert env[-1][1].startswith(str(path)) and says in env[-1][1]
        assert not path.exists()


def test_linearizing_at_a_trim_that_fails_is_a_message_with_the_residuals(
        window, qtbot, env, calls, monkeypatch):
    from blocksim.analysis import OperatingPointError

    def no_point(model, **arguments):
        raise OperatingPointError("no operating point: d integ/dt = 0.4 does not vanish",
                                  Point(False), file="lag.json")
    monkeypatch.setattr(blocksim, "operating_point", no_point)
    mark(window, "sum.y", "input")
    mark(window, "integ.y", "output")
    dialog = linearized(window, qtbot)
    assert dialog.result is not None  # at the initial values first
    dialog.at_choice.setCurrentIndex(1)
    assert dialog.task.wait(30)
    assert env[-1] == ("Cannot linearize",
                       "lag.json: no operating point: d integ/dt = 0.4 does not vanish")
    assert dialog.result is None and not dialog.export_button.isEnabled()
    assert len(calls) == 1  # linearize was not asked at a point that does not exist


def test_closing_the_dialog_while_it_computes_drops_the_late_result(window, qtbot, env,
                                                                    monkeypatch):
    import threading

    release = threading.Event()

    def slow(model, **arguments):
        release.wait(10)
        return loop_model(arguments["inputs"], arguments["outputs"])
    monkeypatch.setattr(blocksim, "linearize", slow)
    mark(window, "sum.y", "input")
    mark(window, "integ.y", "output")
    window.actions_.linearize.trigger()
    dialog = window.linearize_dialog
    assert dialog.progress.isVisible() and not dialog.tabs.isEnabled()  # busy, and says so
    assert window.isEnabled()  # the window stays usable meanwhile
    task = dialog.task
    dialog.close()
    release.set()
    assert task.wait(10)
    assert env == []


def test_a_point_the_library_refuses_is_its_one_line_message(window, qtbot, env):
    """A vector signal marked: blocksim.linearize's own AnalysisError, in a message box."""
    from blocksim.diagram.format import diagram_from_dict

    vector = diagram_from_dict({
        "format": "blocksim", "version": 1,
        "blocks": [{"id": "c", "type": "Constant", "params": {"value": [1, 2]}},
                   {"id": "g", "type": "Gain", "params": {"k": 2}},
                   {"id": "y", "type": "Output"}],
        "wires": [{"src": "c.y", "dst": "g.u", "analysis": ["input"]},
                  {"src": "g.y", "dst": "y.u", "analysis": ["output"]}]})
    window.doc.load(vector)
    dialog = linearized(window, qtbot)
    title, text = env[-1]
    assert title == "Cannot linearize"
    assert "is a vector signal" in text and "\n" not in text
    assert dialog.result is None


def test_the_steady_state_by_simulation_is_the_other_method(window, qtbot, monkeypatch):
    from blocksim.gui.analysis.menu import open_analysis

    asked = []
    monkeypatch.setattr(blocksim, "operating_point", lambda model, check: Point())
    monkeypatch.setattr(blocksim, "steady_state",
                        lambda model, check: asked.append(check) or Point())
    dialog = open_analysis(window, "operating_point")
    qtbot.addWidget(dialog)
    assert dialog.task.wait(30)
    dialog.method.setCurrentIndex(dialog.method.findData("steady"))
    assert dialog.task.wait(30)
    assert asked == [False] and dialog.write_button.isEnabled()


def test_linearize_at_the_steady_state_simulates_first(window, qtbot, calls, monkeypatch):
    steady = Point()
    monkeypatch.setattr(blocksim, "steady_state", lambda model: steady)
    mark(window, "sum.y", "input")
    mark(window, "integ.y", "output")
    dialog = linearized(window, qtbot)
    dialog.at_choice.setCurrentIndex(dialog.at_choice.findData("steady"))
    assert dialog.task.wait(30)
    assert calls[-1]["at"] is steady
    assert "at the steady state (simulated)" in dialog.status.text()


def test_without_python_control_the_dialog_shows_the_librarys_plain_model(window, qtbot,
                                                                          monkeypatch):
    from blocksim.analysis import statespace

    monkeypatch.setattr(statespace, "has_control", lambda: False)
    open_motor(window, qtbot)
    mark(window, "pid.u", "input", "open")
    mark(window, "speed.y", "output")
    dialog = linearized(window, qtbot)
    assert isinstance(dialog.result.system, statespace.LinearModel)
    assert dialog.model_names() == (["pid.u"], ["speed.y"])
    assert "speed" in dialog.result.model.states
    assert dialog.pole_zero.poles.size == 2 and dialog.margins is not None
