"""The engine's artefacts of a model made by `with_params`: its generated functions bound
to its own globals (the new slot values; the same code objects), and the analyses of the
code alone shared by every model of one structure (`SharedDerived`)."""
from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from blocksim.compiler.compiled import CompiledModel


def rebound(model: "CompiledModel", changed: Mapping[str, Any], shared: dict[str, Any]
            ) -> tuple[Mapping[str, Any], "SharedDerived"]:
    """The functions and engine artefacts of a model like `model` whose generated globals
    have the `changed` values (`shared`: its structure's, `Runtime.shared`)."""
    functions, derived = model.functions, _kept(model.derived)
    if changed:
        old = model.functions["deriv"].__globals__
        namespace = {**old, **changed}
        functions = {name: _rebind(fn, old, namespace) for name, fn in functions.items()}
        derived.update(_rebound_derived(model.derived, old, namespace))
    namespace = functions["deriv"].__globals__
    return functions, SharedDerived(shared.setdefault("code_derived", {}), derived, namespace)


def _rebind(fn: Any, old: dict, namespace: dict) -> Any:
    """A generated function reading its globals from `namespace` (the same code)."""
    if not isinstance(fn, types.FunctionType) or fn.__globals__ is not old:
        return fn
    new = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__,
                             fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


# Engine artefacts (`CompiledModel.derived`) that depend on the code alone (a dict of them
# is filled in place: shared as it is), and those that are functions bound to the
# generated globals; any other entry is built again on use.
_CODE_ONLY = ("split", "output_order", "observe_source", "observe_reads", "observed_states",
              "zc_moves", "zc_reads_states", "jac_sparsity", "line_owners",
              "zc_component_states")
_BOUND = ("observe", "deriv_list", "zc_list", "probe", "deriv_mode_memo")
_FUNCTIONS = "bound functions"  # the shared dict's entry of `_BOUND` functions (a dict)
_NO_VECTOR = "no deriv_vector"  # the shared dict's entry: the code has no run to vectorise


class SharedDerived(dict):
    """A model's engine artefacts, where those that depend on the code alone (`_CODE_ONLY`)
    are read from and written to a dict shared by every model of one structure: a sweep's
    runs, each a new model from `with_params`, analyse the generated code once, not per run
    (tens of milliseconds for the ball). Functions the engine generates from the code
    (`_BOUND`, the zero crossings one by one) are compiled once too: the first model's, a
    new function reading this model's globals (`namespace`) for every other."""

    def __init__(self, shared: dict[str, Any], own: Mapping[str, Any], namespace: dict):
        super().__init__(own)
        self.shared, self.namespace = shared, namespace
        self.functions = shared.setdefault(_FUNCTIONS, {})
        for key, value in own.items():
            if key in _CODE_ONLY:
                shared.setdefault(key, value)

    def __missing__(self, key: str) -> Any:
        if key in _CODE_ONLY and key in self.shared:
            return self.shared[key]
        if key in self.functions:
            fn = self.functions[key]
            value = (_rebind(fn, fn.__globals__, self.namespace) if key in _BOUND else
                     [(owner, _rebind(f, f.__globals__, self.namespace)) for owner, f in fn])
            dict.__setitem__(self, key, value)
            return value
        if key == "deriv_vector" and self.shared.get(_NO_VECTOR):
            return None
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return (dict.__contains__(self, key) or (key in _CODE_ONLY and key in self.shared)
                or key in self.functions
                or (key == "deriv_vector" and bool(self.shared.get(_NO_VECTOR))))

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def __setitem__(self, key: str, value: Any) -> None:
        if key == "zc_component" and isinstance(value, dict):
            value = _Components(self.shared.setdefault("zc_component", {}), self.namespace,
                                value)
        dict.__setitem__(self, key, value)
        if key in _CODE_ONLY:
            self.shared[key] = value
        elif key in _BOUND and getattr(value, "__globals__", None) is self.namespace:
            self.functions.setdefault(key, value)
        elif key == "next_time_parts" and isinstance(value, list) and all(
                getattr(f, "__globals__", None) is self.namespace for _, f in value):
            self.functions.setdefault(key, value)
        elif key == "deriv_vector" and value is None:
            self.shared[_NO_VECTOR] = True


class _Components(dict):
    """One model's zero crossings one by one (index -> function), those another model of
    its structure compiled taken from `shared` and bound to this model's globals."""

    def __init__(self, shared: dict[int, Any], namespace: dict, own: Mapping[int, Any]):
        super().__init__(own)
        self.shared, self.namespace = shared, namespace

    def __contains__(self, i: object) -> bool:
        return dict.__contains__(self, i) or i in self.shared

    def __missing__(self, i: int) -> Any:
        fn = self.shared[i]
        value = _rebind(fn, fn.__globals__, self.namespace)
        dict.__setitem__(self, i, value)
        return value

    def __setitem__(self, i: int, fn: Any) -> None:
        dict.__setitem__(self, i, fn)
        if getattr(fn, "__globals__", None) is self.namespace:
            self.shared.setdefault(i, fn)


def _kept(derived: Mapping[str, Any]) -> dict[str, Any]:
    kept = {key: derived[key] for key in _CODE_ONLY if key in derived}
    if "deriv_vector" in derived and derived["deriv_vector"] is None:
        kept["deriv_vector"] = None  # no run to vectorise: a matter of the code alone
    return kept


def _rebound_derived(derived: Mapping[str, Any], old: dict, namespace: dict) -> dict:
    found: dict[str, Any] = {}
    for key in _BOUND:
        fn = derived.get(key)
        if isinstance(fn, types.FunctionType) and fn.__globals__ is old:
            found[key] = _rebind(fn, old, namespace)
    parts = derived.get("zc_component")
    if isinstance(parts, dict):
        found["zc_component"] = {i: _rebind(fn, old, namespace) for i, fn in parts.items()}
    nexts = derived.get("next_time_parts")
    if isinstance(nexts, list):
        found["next_time_parts"] = [(owner, _rebind(fn, old, namespace)) for owner, fn in nexts]
    return found

