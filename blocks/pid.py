"""The PID controller: continuous (sample_time 0, integrator and filter as continuous states
with event-exact output limits) or discrete (a sample time; Simulink's discrete PID with
forward Euler, backward Euler or trapezoidal integrator and filter)."""
from __future__ import annotations

import math

from .continuous import _edge_condition
from .discrete import RESETS, broadcast_names, clip_expr, reset_condition
from .discrete_integrator import METHOD_DOC, METHODS
from .linear import _combo
from blocksim.blocktypes.blockspec import BlockType, ContinuousOrSampled, Emit, EventKind, Param, Port, Sizes, lit

ANTIWINDUP = ("none", "back-calculation", "clamping")


class PID(ContinuousOrSampled, BlockType):
    """A PID controller on the error signal e (build e = r - y with a Sum block).

    Parallel form: u = P e + I/s e + D N s/(s + N) e; ideal form: u = P (e + I/s e +
    D N s/(s + N) e). The derivative is filtered with coefficient N (rad/s); D = 0 leaves
    the filter out. Both forms keep the integrator state xI and the filter state xF in
    output units (the ideal form scales the input by P first), so `initial_integrator` is
    the integral term's initial value and `initial_filter` the filter integrator's: in
    parallel form u = P e + xI + N (D e - xF), xI' = I e, xF' = N (D e - xF).

    `sample_time` 0 (default) makes a continuous controller; a period (or [period,
    offset], or -1 to inherit a discrete input rate) a discrete one, where I/s becomes
    T/(z - 1) (forward-euler), T z/(z - 1) (backward-euler) or T/2 (z + 1)/(z - 1)
    (trapezoidal) for the integrator and, separately, for the filter's integrator, as in
    Simulink. Discrete, parallel, forward Euler: u(k) = P e(k) + xI(k) + d(k),
    xI(k+1) = xI(k) + T I e(k), where d(k) is the filtered derivative term: d(k) =
    N (D e(k) - xF(k)) / (1 + c N T), xF(k+1) = xF(k) + T d(k), c = 0, 1 or 1/2 for a
    forward-euler, backward-euler or trapezoidal filter. At the first hit and at a reset,
    each integrator's output is its initial value (the Discrete-Time Integrator's rule:
    xI = initial_integrator, d = N (D e - initial_filter)); before the first hit (an
    offset) the output is 0 (clipped to the limits).

    A plain backward difference d(k) = D (e(k) - e(k-1)) / T: filter_method
    forward-euler with N = 1/T (then xF(k) = D e(k-1)) and initial_filter = D e(-1), the
    error assumed before the first hit (0: d(0) = D e(0) / T; P D e(-1) in ideal form).

    Output limits `lower`/`upper` clip u. Continuous: which limit holds is latched from two
    zero crossings of the unlimited sum v (as in the library's limiter), so it changes only
    at located events. Anti-windup:

    * "back-calculation": the integrator's input gets Kb (u - v) added (discrete: at the
      update, xI(k+1) += T Kb (u(k) - v(k)) whatever the method);
    * "clamping": the integrator stops while the output is held at a limit and its input
      I e drives further past that limit (discrete: decided at each hit from v computed
      with the unclamped integrator; a clamped hit adds nothing to the integrator).
      Continuous: a latched mode changed only at this block's located crossings (v
      reaching or leaving a limit, I e changing sign); per event at most one clamp and no
      clamp on the side just released, so it never chatters. At a sliding point (held
      integrator: v falls back inside; running integrator: v leaves again) the exact
      motion would need de/dt; the block then keeps integrating with the output at the
      limit, as without anti-windup, until v returns inside or I e turns (each logged as
      an event: "clamp", "release").

    `external_reset` resets the integrator and filter states to their initial values:
    continuous at a located edge of the reset input (level: both held at their initial
    values while it is nonzero, so the derivative term reads N (D e - initial_filter)
    there), discrete at hits as the DiscreteIntegrator does. Works
    elementwise on a vector error.
    """

    name = "PID"
    category = "Discrete"
    event_kinds = (
        EventKind("reset", "the `reset` input (external_reset): the integrator and filter "
                           "states were set to their initial values"),
        EventKind("clamp", "clamping anti-windup: the integrator stops, the output held at a "
                           "limit"),
        EventKind("release", "clamping anti-windup: the integrator runs again"),
    )
    params = (
        Param("form", "choice", "parallel", "parallel: P e + I/s e + D..., ideal: P (e + I/s e "
              "+ D...)", choices=("parallel", "ideal")),
        Param("P", "scalar", 1.0, "proportional gain"),
        Param("I", "scalar", 1.0, "integral gain", unit="1/s"),
        Param("D", "scalar", 0.0, "derivative gain (0: no derivative term)", unit="s"),
        Param("N", "scalar", 100.0, "derivative filter coefficient (> 0)", unit="rad/s",
              low=0.0),
        Param("sample_time", "vector", 0.0, "0 for a continuous PID; else the sample period, "
              "[period, offset] with 0 <= offset < period, or -1 to inherit a discrete rate",
              unit="s"),
        Param("integrator_method", "choice", "forward-euler", "discrete integrator: " + METHOD_DOC,
              choices=tuple(METHODS)),
        Param("filter_method", "choice", "forward-euler", "discrete derivative filter: "
              + METHOD_DOC, choices=tuple(METHODS)),
        Param("lower", "scalar", -math.inf, "lower output limit (-inf: none)", allow_inf=True),
        Param("upper", "scalar", math.inf, "upper output limit (inf: none)", allow_inf=True),
        Param("antiwindup", "choice", "none", "anti-windup with finite limits",
              choices=ANTIWINDUP),
        Param("Kb", "scalar", 1.0, "back-calculation gain", unit="1/s"),
        Param("external_reset", "choice", "none", "reset of the integrator and filter states: "
              "'rising', 'falling', 'either' edges of the reset input (located events; "
              "discrete: compared at hits as in DiscreteIntegrator), 'level' while it is "
              "nonzero, 'none': no reset port", choices=RESETS),
        Param("initial_integrator", "scalar", 0.0, "initial value of the integral term"),
        Param("initial_filter", "scalar", 0.0, "initial value of the filter's integrator"),
    )
    inputs = (Port("e", "error signal (r - y)"), Port("reset", "reset signal (external_reset "
                                                               "not 'none')"))
    outputs = (Port("u", "controller output"),)

    # ----- parameters -----
    def check(self, p):
        problem = self.sample_time_problem(p)
        if problem:
            return problem
        if p.lower > p.upper:
            return f"parameter 'lower' ({p.lower:g}) is above 'upper' ({p.upper:g})"
        if p.D != 0.0 and not p.N > 0.0:
            return "parameter 'N' must be > 0 when D is not 0"
        return None

    @staticmethod
    def _limited(p) -> bool:
        return p.lower > -math.inf or p.upper < math.inf

    def _clamping(self, p) -> bool:
        return p.antiwindup == "clamping" and self._limited(p)

    def _back(self, p) -> bool:
        return p.antiwindup == "back-calculation" and self._limited(p)

    @staticmethod
    def _gains(p) -> tuple[float, float, float, float]:
        """(scale of e, P-path gain, integrator input gain, filter input gain): u = kp q +
        xI + N (D q - xF) with q = scale e, xI' = I q."""
        scale = p.P if p.form == "ideal" else 1.0
        kp = 1.0 if p.form == "ideal" else p.P
        return scale, kp, p.I * scale, p.D * scale

    def _reads_e(self, p) -> bool:
        """Whether the output reads e directly (at a hit, for a discrete PID)."""
        scale, kp, ki, kd = self._gains(p)
        if kp * scale != 0.0 or kd != 0.0:
            return True
        if not self.is_discrete(p):
            return False
        return ki != 0.0 and (METHODS[p.integrator_method] != 0.0 or self._clamping(p))

    def input_ports(self, p):
        return self.inputs if p.external_reset != "none" else self.inputs[:1]

    def feedthrough(self, p):
        direct = (["e"] if self._reads_e(p) else []) + (
            ["reset"] if p.external_reset != "none" and self.is_discrete(p) else [])
        return {"u": tuple(direct)}

    def _groups(self, p) -> list[str]:
        """The discrete slots, each one per element (then one `fresh` flag)."""
        if not self.is_discrete(p):
            return ["mode", "entered", "released"] if self._clamping(p) else []
        groups = ["u", "sI", "iH"] + (["sF", "FH", "dH"] if p.D != 0.0 else [])
        groups += (["vH"] if self._back(p) else []) + (["cH"] if self._clamping(p) else [])
        return groups + (["prev"] if p.external_reset != "none" else [])

    def sizes(self, p, in_widths):
        w = in_widths.get("e") or 1
        reset = in_widths.get("reset")
        if reset is not None and reset not in (1, w):
            raise ValueError(f"input 'reset' has width {reset} where 1 or {w} are needed")
        groups = len(self._groups(p))
        if self.is_discrete(p):
            return Sizes({"u": w}, discrete=groups * w + 1)
        states = w * (2 if p.D != 0.0 else 1)
        zcs = w * (2 * self._limited(p) + self._clamping(p))
        zcs += (reset or 1) if p.external_reset != "none" else 0
        return Sizes({"u": w}, states=states, discrete=groups * w, zero_crossings=zcs)

    def _slots(self, p, names: list, w: int) -> dict[str, list]:
        groups = self._groups(p)
        slots = {g: names[i * w:(i + 1) * w] for i, g in enumerate(groups)}
        if self.is_discrete(p):
            slots["fresh"] = names[-1]
        return slots

    def initial_states(self, p, n):
        w = n // (2 if p.D != 0.0 else 1)
        return [p.initial_integrator] * w + [p.initial_filter] * (n - w)

    def initial_discrete(self, p, n):
        if not self.is_discrete(p):
            return [0.0] * n
        w = (n - 1) // len(self._groups(p))
        values = []
        for group in self._groups(p):
            start = {"u": min(max(0.0, p.lower), p.upper), "sI": p.initial_integrator,
                     "iH": p.initial_integrator, "sF": p.initial_filter,
                     "FH": p.initial_filter}.get(group, 0.0)
            values += [start] * w
        return values + [1.0]  # fresh: the first hit starts from the initial values

    # ----- code -----
    def output(self, e: Emit):
        if self.is_discrete(e.p):
            held = self._slots(e.p, e.m, len(e.y["u"]))["u"]
            return {"u": [f"{y} = {m}" for y, m in zip(e.y["u"], held)]}
        p, lines = e.p, []
        for k, y in enumerate(e.y["u"]):
            v = self._sum(e, k)
            if self._limited(p):
                hi, lo = self._zc(e, k)[:2]
                v = f"({lit(p.upper)} if {hi} < 0.0 else {v})" if p.upper < math.inf else v
                v = f"({lit(p.lower)} if {lo} < 0.0 else {v})" if p.lower > -math.inf else v
            lines.append(f"{y} = {v}")
        return {"u": lines}

    # continuous
    def _sum(self, e: Emit, k: int) -> str:
        """The unlimited output v of element k (continuous)."""
        scale, kp, _, kd = self._gains(e.p)
        w = len(e.y["u"])
        terms = [(kp * scale + e.p.N * kd, e.u["e"][k] if len(e.u["e"]) > 1 else e.u["e"][0]),
                 (1.0, e.x[k])]
        if e.p.D != 0.0:
            terms.append((-e.p.N, e.x[w + k]))
        return _combo(terms)

    def _zc(self, e: Emit, k: int) -> list[str]:
        """Latched signs of element k: [upper - v, v - lower] with limits, [I e] with clamping."""
        per = 2 * self._limited(e.p) + self._clamping(e.p)
        return e.z[k * per:(k + 1) * per]

    def _reset_zc(self, e: Emit) -> tuple[list[str], list[str], list[str]]:
        w = len(e.y["u"])
        start = w * (2 * self._limited(e.p) + self._clamping(e.p))
        return e.g[start:], e.zo[start:], e.zn[start:]

    def derivative(self, e: Emit):
        p = e.p
        _, _, ki, kd = self._gains(p)
        w = len(e.y["u"])
        u = broadcast_names(e.u["e"], w)
        slots = self._slots(p, e.m, w)
        resets = self._reset_zc(e)[1] if p.external_reset == "level" else []
        lines = []
        for k in range(w):
            xin = _combo([(ki, u[k])])
            if self._back(p):
                hi, lo = self._zc(e, k)[:2]
                v = self._sum(e, k)
                excess = "0.0"
                if p.upper < math.inf:
                    excess = f"({lit(p.upper)} - ({v}) if {hi} < 0.0 else {excess})"
                if p.lower > -math.inf:
                    excess = f"({lit(p.lower)} - ({v}) if {lo} < 0.0 else {excess})"
                xin = f"{xin} + {lit(p.Kb)} * {excess}"
            if self._clamping(p):
                xin = f"({xin} if {slots['mode'][k]} == 0.0 else 0.0)"
            dxf = _combo([(p.N * kd, u[k]), (-p.N, e.x[w + k])]) if p.D != 0.0 else None
            if resets:
                held = resets[k] if len(resets) > 1 else resets[0]
                xin = f"({xin} if {held} == 0.0 else 0.0)"
                dxf = dxf and f"({dxf} if {held} == 0.0 else 0.0)"
            lines.append(f"{e.dx[k]} = {xin}")
            if dxf:
                lines.append(f"{e.dx[w + k]} = {dxf}")
        return lines

    def zero_crossing(self, e: Emit):
        p = e.p
        if self.is_discrete(p):
            return []
        w = len(e.y["u"])
        ki = self._gains(p)[2]
        u = broadcast_names(e.u["e"], w)
        lines = []
        for k in range(w):
            g = iter(e.g[k * (2 * self._limited(p) + self._clamping(p)):])
            if self._limited(p):
                v = self._sum(e, k)
                lines.append(f"{next(g)} = " + (f"{lit(p.upper)} - ({v})"
                                                 if p.upper < math.inf else "1.0"))
                lines.append(f"{next(g)} = " + (f"{v} - {lit(p.lower)}"
                                                 if p.lower > -math.inf else "1.0"))
            if self._clamping(p):
                lines.append(f"{next(g)} = {_combo([(ki, u[k])])}")
        reset_g = self._reset_zc(e)[0]
        lines += [f"{g} = {r}" for g, r in zip(reset_g, e.u.get("reset", []))]
        return lines

    def update(self, e: Emit):
        p = e.p
        if self.is_discrete(p):
            return []
        w = len(e.y["u"])
        lines = []
        if p.external_reset != "none":
            _, zo, zn = self._reset_zc(e)
            for j in range(len(zo)):
                if p.external_reset == "level":
                    fire = f"{zn[j]} != 0.0 and {zo[j]} == 0.0"
                else:
                    fire = _edge_condition(p.external_reset, zo[j], zn[j])
                body = []
                for k in (range(w) if len(zo) == 1 else (j,)):
                    body.append(f"    {e.x[k]} = {lit(p.initial_integrator)}")
                    if p.D != 0.0:
                        body.append(f"    {e.x[w + k]} = {lit(p.initial_filter)}")
                lines += [f"if not init and {fire}:", *body, f"    {e.event('reset')}"]
        if self._clamping(p):
            slots = self._slots(p, e.m, w)
            for k in range(w):
                per = 3
                zo = e.zo[k * per:(k + 1) * per]
                zn = e.zn[k * per:(k + 1) * per]
                mode, entered, released = (slots[g][k] for g in ("mode", "entered", "released"))
                want = f"want{e.index}_{k}"
                own = " or ".join(f"{a} != {b}" for a, b in zip(zo, zn))
                lines += [
                    f"if init or {own}:",
                    f"    {want} = (1.0 if {zn[0]} <= 0.0 and {zn[2]} > 0.0 else -1.0 if "
                    f"{zn[1]} <= 0.0 and {zn[2]} < 0.0 else 0.0)",
                    f"    if {mode} != 0.0 and {want} != {mode}:",
                    f"        {released} = {mode}; {mode} = 0.0; {e.event('release')}",
                    f"    if {want} != 0.0 and {mode} == 0.0 and {entered} == 0.0 and "
                    f"{released} != {want}:",
                    f"        {mode} = {want}; {entered} = {want}; {e.event('clamp')}",
                ]
        return lines

    def after_event(self, e: Emit):
        if self.is_discrete(e.p) or not self._clamping(e.p):
            return []
        slots = self._slots(e.p, e.m, len(e.y["u"]))
        return [f"{m} = 0.0" for m in slots["entered"] + slots["released"]]

    # discrete
    def sample_output(self, e: Emit):
        p = e.p
        w = len(e.y["u"])
        s = self._slots(p, e.m, w)
        scale, kp, ki, kd = self._gains(p)
        period = e.rate.period
        ci, cf = METHODS[p.integrator_method], METHODS[p.filter_method]
        u = broadcast_names(e.u["e"], w)
        reset = broadcast_names(e.u["reset"], w) if "prev" in s else None
        lines = []
        for k in range(w):
            fresh, v = f"fresh{e.index}_{k}", f"v{e.index}_{k}"
            test = f"{s['fresh']} != 0.0"
            if reset is not None:
                test += " or " + reset_condition(p.external_reset, s["prev"][k], reset[k])
            lines.append(f"{fresh} = {test}")
            terms = [(kp * scale, u[k]), (1.0, s["iH"][k])]
            if p.D != 0.0:
                dq = _combo([(kd, u[k])])
                lines.append(f"{s['dH'][k]} = ({lit(p.N)} * ({dq} - {lit(p.initial_filter)}) "
                             f"if {fresh} else {lit(p.N / (1.0 + cf * p.N * period))} * "
                             f"({_combo([(kd, u[k]), (-1.0, s['sF'][k])])}))")
                lines.append(f"{s['FH'][k]} = ({lit(p.initial_filter)} if {fresh} else "
                             f"{_combo([(1.0, s['sF'][k]), (cf * period, s['dH'][k])])})")
                terms.append((1.0, s["dH"][k]))
            lines.append(f"{s['iH'][k]} = ({lit(p.initial_integrator)} if {fresh} else "
                         f"{_combo([(1.0, s['sI'][k]), (ci * period * ki, u[k])])})")
            lines.append(f"{v} = {_combo(terms)}")
            if self._clamping(p):
                xin = _combo([(ki, u[k])])
                lines.append(f"{s['cH'][k]} = (1.0 if ({v} > {lit(p.upper)} and {xin} > 0.0) or "
                             f"({v} < {lit(p.lower)} and {xin} < 0.0) else 0.0)")
                if ci != 0.0 and ki != 0.0:  # a clamped hit: the integrator's input is 0
                    lines += [f"if {s['cH'][k]} != 0.0 and not {fresh}:",
                              f"    {s['iH'][k]} = {s['sI'][k]}",
                              f"    {v} = {_combo(terms)}"]
            if self._back(p):
                lines.append(f"{s['vH'][k]} = {v}")
            lines.append(f"{s['u'][k]} = {clip_expr(v, p.lower, p.upper)}")
        return {"u": lines}

    def sample_update(self, e: Emit):
        p = e.p
        w = len(e.y["u"])
        s = self._slots(p, e.m, w)
        _, _, ki, _ = self._gains(p)
        period = e.rate.period
        ci, cf = METHODS[p.integrator_method], METHODS[p.filter_method]
        u = broadcast_names(e.u["e"], w)
        lines = []
        for k in range(w):
            step = _combo([(1.0, s["iH"][k]), ((1.0 - ci) * period * ki, u[k])])
            if self._clamping(p) and step != s["iH"][k]:
                step = f"({s['iH'][k]} if {s['cH'][k]} != 0.0 else {step})"
            elif self._back(p):
                step = f"{step} + {lit(period * p.Kb)} * ({s['u'][k]} - {s['vH'][k]})"
            lines.append(f"{s['sI'][k]} = {step}")
            if p.D != 0.0:
                lines.append(f"{s['sF'][k]} = " + _combo(
                    [(1.0, s["FH"][k]), ((1.0 - cf) * period, s["dH"][k])]))
        if "prev" in s:
            lines += [f"{prev} = {r}" for prev, r in
                      zip(s["prev"], broadcast_names(e.u["reset"], w))]
        return lines + [f"{s['fresh']} = 0.0"]


BLOCK_TYPES = (PID,)
