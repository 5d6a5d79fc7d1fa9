"""ARGESIM C21 RLC circuit built from components (diagrams/physical/c21_diode_*.json), run
from the CLI against ../shared/benchmarks/BENCHMARKS.md section 5 (copied to references.py).

The same circuit as diagrams/diode_ideal.json, diode_shockley.json and diode_pwl.json, but
nobody wrote its state equations: the compiler derives them from the components.
"""
import numpy as np
import pytest

import references as ref
from builders import cli_run


def row_at(table, t):
    """The single output-grid row at t (grid points are within an ulp of k * 1e-7)."""
    rows = np.flatnonzero(np.abs(table["time"] - t) < 1e-15)
    assert len(rows) == 1
    return rows[0]


def diode_switches(log):
    return [(t, kind) for t, block, kind in log if block == "D" and kind in ("on", "off")]


# ---------------------------------------------------------------- ideal diode
@pytest.fixture(scope="module")
def ideal(tmp_path_factory):
    return cli_run(tmp_path_factory.mktemp("c21_ideal"), "physical/c21_diode_ideal.json",
                   "--rtol", 1e-10)


def test_ideal_diode_switches_29_times_at_the_reference_instants(ideal):
    table, log = ideal
    switches = diode_switches(log)
    assert len(switches) == ref.DIODE_SWITCH_COUNT
    assert all(0 < t <= 1e-4 for t, _ in switches)
    # conducting from t = 0: switch 1 is to locking ('off'), then they alternate
    assert [kind for _, kind in switches] == ["off", "on"] * 14 + ["off"]
    for number, t_ref in ref.DIODE_SWITCHES.items():
        assert abs(switches[number - 1][0] - t_ref) < 1e-11, number
    # each event instant is one pair of rows: the values just before and just after
    for t, _ in switches:
        assert np.count_nonzero(table["time"] == t) == 2, t


def test_ideal_diode_values_at_5us_and_at_the_end(ideal):
    table, _ = ideal
    k = row_at(table, 5e-6)
    for name, value in ref.DIODE_AT_5US.items():
        assert abs(table[name][k] - value) < 1e-7 * abs(value), name
    assert table["time"][-1] == 1e-4
    assert abs(table["uC"][-1] - ref.DIODE_AT_END["uC"]) < 1e-7 * abs(ref.DIODE_AT_END["uC"])
    assert abs(table["i"][-1] - ref.DIODE_AT_END["i"]) < 1e-12  # i(1e-4) is tiny: absolute


def test_ideal_diode_either_blocks_or_conducts(ideal):
    # Ron = Goff = 0: blocking (uD <= 0, iD = 0) or conducting (uD = 0, iD >= 0); the
    # sensors compute uD and iD from the node voltages, so "0" is to roundoff.
    table, _ = ideal
    uD, iD = table["uD"], table["iD"]
    assert np.all(uD <= 1e-12) and np.all(iD >= -1e-12)
    assert np.all((np.abs(uD) <= 1e-12) | (np.abs(iD) <= 1e-12))
    assert np.any(uD < -1e-3) and np.any(iD > 1e-4)


# ---------------------------------------------------------------- Shockley diode
@pytest.fixture(scope="module")
def shockley(tmp_path_factory):
    return cli_run(tmp_path_factory.mktemp("c21_shockley"), "physical/c21_diode_shockley.json")


def test_shockley_diode_switches(shockley):
    _, log = shockley
    switches = diode_switches(log)
    assert len(switches) == ref.SHOCKLEY_SWITCH_COUNT
    assert all(0 < t <= 1e-4 for t, _ in switches)
    assert [kind for _, kind in switches[:4]] == ["off", "on", "off", "on"]
    first = np.array([t for t, _ in switches[:len(ref.SHOCKLEY_FIRST_SWITCHES)]])
    assert np.all(np.abs(first - ref.SHOCKLEY_FIRST_SWITCHES) < 1e-10)


def test_shockley_diode_values_at_2_2us_and_at_the_end(shockley):
    table, _ = shockley
    k = row_at(table, 2.2e-6)
    # bounds: the acceptance's 1e-6 for uD, the rounding of the reference's digits else
    for name, bound in (("uD", 1e-6), ("uC", 1e-8), ("i", 1e-7), ("iD", 1e-6)):
        value = ref.SHOCKLEY_AT_2_2US[name]
        assert abs(table[name][k] - value) < bound * abs(value), name
    assert abs(table["uC"][-1] - ref.SHOCKLEY_UC_END) < 1e-6 * ref.SHOCKLEY_UC_END


def test_shockley_diode_law_holds_on_every_row(shockley):
    # the component's law, solved by Newton inside the network's block, on every row
    # (both rows of an event instant included)
    table, _ = shockley
    uD, iD = table["uD"], table["iD"]
    on = uD >= 0
    assert np.allclose(iD[on], 1e-8 * np.expm1(uD[on] / 26e-3), rtol=1e-9, atol=1e-18)
    assert np.all(np.abs(iD[~on]) <= 1e-15)


# ---------------------------------------------------------------- piecewise-linear diode
@pytest.mark.parametrize("n", [3, 5, 10])
def test_piecewise_linear_diode(n, tmp_path):
    table, log = cli_run(tmp_path, "physical/c21_diode_pwl.json", "--set", f"N={n}")
    k = row_at(table, 2.2e-6)
    assert abs(table["iD"][k] - ref.PWL_ID_AT_2_2US[n]) < 1e-6 * ref.PWL_ID_AT_2_2US[n]
    assert abs(table["uC"][-1] - ref.PWL_UC_END[n]) < 2e-6 * ref.PWL_UC_END[n]
    # every breakpoint crossing is a located event (the diode crosses 0 V about 29 times
    # and the others on most of its half waves): two rows at each instant
    instants = sorted({t for t, _, _ in log})
    assert len(instants) > 2 * ref.SHOCKLEY_SWITCH_COUNT
    assert all(np.count_nonzero(table["time"] == t) == 2 for t in instants)
