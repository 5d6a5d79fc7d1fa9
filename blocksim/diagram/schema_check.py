"""A fast yes/no check of a document against the diagram schema, for the common case.

jsonschema builds a validator object for every node it descends into: checking a
10,000-block file takes over a second, nearly all of it for files that are valid. This
module turns the same schema (`resources/diagram.schema.json`, still the single source)
into nested plain functions once and answers only "valid" or "not sure". The loader trusts "valid" and
asks jsonschema for its precise message otherwise; a keyword this module does not know
makes it answer "not sure", so a schema extended later stays checked by jsonschema.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable, Mapping

Schema = Mapping[str, Any]


class _Unknown(Exception):
    """The schema uses something this checker does not implement."""


def is_valid(instance: Any, schema: Schema) -> bool:
    """True if `instance` is valid against `schema` (draft 2020-12 semantics as jsonschema
    implements them); False if it is not, or if this checker cannot tell. The schema is
    turned into a checking function once (schemas are not changed once in use)."""
    try:
        check = _checker(schema)
    except (_Unknown, RecursionError):
        return False
    try:
        return check(instance)
    except RecursionError:
        return False


_CHECKERS: dict[int, tuple[Schema, Callable[[Any], bool]]] = {}


def _checker(schema: Schema) -> Callable[[Any], bool]:
    """The checking function of `schema` (cached by identity; the schema is kept alive with
    it so that its id cannot be reused)."""
    cached = _CHECKERS.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    if not isinstance(schema, dict):
        raise _Unknown(schema)
    check = _Compiler(schema.get("$defs", {})).node(schema)
    if len(_CHECKERS) >= 16:
        _CHECKERS.clear()
    _CHECKERS[id(schema)] = (schema, check)
    return check


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "number": _is_number,
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
# Keywords with no effect on validity.
_ANNOTATIONS = frozenset(("title", "description", "$schema", "$id", "$defs", "$comment",
                          "default", "examples"))


@lru_cache(maxsize=64)
def _pattern(text: str) -> re.Pattern:
    return re.compile(text)


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: booleans are not numbers (jsonschema's rule for const and enum)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return a == b


class _Compiler:
    """Turns schema nodes into functions `check(value) -> bool`. Per value, only the
    keywords' own tests run: the schema is looked at once, not at every node of every
    block (walking it per value made a 10,000-block file take half a second)."""

    def __init__(self, defs: Mapping[str, Any]):
        self.defs = defs
        self.done: dict[str, Callable[[Any], bool]] = {}
        self.busy: set[str] = set()

    def node(self, schema: Any) -> Callable[[Any], bool]:
        if schema is True:
            return _always
        if schema is False or not isinstance(schema, dict):
            raise _Unknown(schema)
        tests = []
        for key, arg in schema.items():
            if key in _ANNOTATIONS:
                continue
            make = _KEYWORDS.get(key)
            if make is None:
                raise _Unknown(key)
            test = make(self, arg, schema)
            if test is not None:
                tests.append(test)
        return _all_of(tests)

    def ref(self, arg: Any) -> Callable[[Any], bool]:
        if not (isinstance(arg, str) and arg.startswith("#/$defs/")) or arg[8:] not in self.defs:
            raise _Unknown(arg)
        name = arg[8:]
        if name in self.done:
            return self.done[name]
        if name in self.busy:  # a recursive definition: looked up when first used
            done = self.done
            return lambda v: done[name](v)
        self.busy.add(name)
        self.done[name] = check = self.node(self.defs[name])
        self.busy.discard(name)
        return check


def _always(v: Any) -> bool:
    return True


def _all_of(tests: list[Callable[[Any], bool]]) -> Callable[[Any], bool]:
    if not tests:
        return _always
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:
        first, second = tests
        return lambda v: first(v) and second(v)
    tests_ = tuple(tests)

    def check(v: Any) -> bool:
        for test in tests_:
            if not test(v):
                return False
        return True
    return check


def _type(c: _Compiler, arg, schema):
    names = [arg] if isinstance(arg, str) else arg
    if not isinstance(names, list) or any(name not in _TYPES for name in names):
        raise _Unknown(arg)
    tests = tuple(_TYPES[name] for name in names)
    if len(tests) == 1:
        return tests[0]
    return lambda v: any(test(v) for test in tests)


def _properties(c: _Compiler, arg, schema):
    subs = tuple((key, c.node(sub)) for key, sub in arg.items())

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        for key, sub in subs:
            if key in v and not sub(v[key]):
                return False
        return True
    return check


def _additional(c: _Compiler, arg, schema):
    if "patternProperties" in schema:
        raise _Unknown("patternProperties")
    if arg is True:
        return None
    known = frozenset(schema.get("properties", {}))
    if arg is False:
        return lambda v: not isinstance(v, dict) or known.issuperset(v)
    sub = c.node(arg)

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        for key, item in v.items():
            if key not in known and not sub(item):
                return False
        return True
    return check


def _property_names(c: _Compiler, arg, schema):
    sub = c.node(arg)
    return lambda v: not isinstance(v, dict) or all(sub(k) for k in v)


def _required(c: _Compiler, arg, schema):
    keys = tuple(arg)
    return lambda v: not isinstance(v, dict) or all(k in v for k in keys)


def _items(c: _Compiler, arg, schema):
    skip = len(schema.get("prefixItems", ()))
    sub = c.node(arg)
    verdict = _number_verdict(arg, c.defs)

    def check(v: Any) -> bool:
        if not isinstance(v, list):
            return True
        rest = v[skip:] if skip else v
        # A long numeric array (a table): one verdict for all its numbers.
        if verdict is not None and len(rest) > 16 and all(
                type(item) in (float, int) for item in rest):
            return verdict
        for item in rest:
            if not sub(item):
                return False
        return True
    return check


# Keywords that constrain only arrays, objects or strings: every number passes them.
_NOT_FOR_NUMBERS = frozenset(("items", "prefixItems", "properties", "additionalProperties",
                              "propertyNames", "required", "pattern", "minLength", "maxLength",
                              "minItems", "maxItems", "minProperties", "maxProperties"))


def _number_verdict(schema: Any, defs: Mapping[str, Any], depth: int = 0) -> bool | None:
    """Whether `schema` accepts every number (True), no number (False), or depends on the
    value (None: bounds, const, enum, or a keyword not handled here)."""
    if schema is True or depth > 32:
        return True if schema is True else None
    if not isinstance(schema, dict):
        return None
    verdicts = []
    for key, arg in schema.items():
        if key in _ANNOTATIONS or key in _NOT_FOR_NUMBERS:
            continue
        if key == "type":
            names = [arg] if isinstance(arg, str) else list(arg)
            verdicts.append(True if "number" in names
                            else None if "integer" in names else False)
        elif key == "$ref" and isinstance(arg, str) and arg[8:] in defs:
            verdicts.append(_number_verdict(defs[arg[8:]], defs, depth + 1))
        elif key == "anyOf":
            subs = [_number_verdict(sub, defs, depth + 1) for sub in arg]
            verdicts.append(True if True in subs else None if None in subs else False)
        else:
            return None
    return False if False in verdicts else None if None in verdicts else True


def _prefix_items(c: _Compiler, arg, schema):
    subs = tuple(c.node(sub) for sub in arg)
    return lambda v: not isinstance(v, list) or all(sub(item) for item, sub in zip(v, subs))


def _any_of(c: _Compiler, arg, schema):
    subs = tuple(c.node(sub) for sub in arg)

    def check(v: Any) -> bool:
        for sub in subs:
            if sub(v):
                return True
        return False
    return check


def _pattern_check(c: _Compiler, arg, schema):
    search = _pattern(arg).search
    return lambda v: not isinstance(v, str) or search(v) is not None


def _const(c: _Compiler, arg, schema):
    return lambda v: _equal(v, arg)


def _enum(c: _Compiler, arg, schema):
    return lambda v: any(_equal(v, e) for e in arg)


def _bound(test: Callable[[float, float], bool]):
    def make(c: _Compiler, arg, schema):
        return lambda v: not _is_number(v) or test(v, arg)
    return make


def _size(kind: type, test: Callable[[int, int], bool]):
    def make(c: _Compiler, arg, schema):
        return lambda v: not isinstance(v, kind) or test(len(v), arg)
    return make


# Each keyword's maker: (compiler, its argument, the schema node) -> a test, or None when
# the keyword accepts everything.
_KEYWORDS: dict[str, Callable[[_Compiler, Any, dict], Callable[[Any], bool] | None]] = {
    "$ref": lambda c, arg, schema: c.ref(arg),
    "type": _type,
    "const": _const,
    "enum": _enum,
    "properties": _properties,
    "additionalProperties": _additional,
    "propertyNames": _property_names,
    "required": _required,
    "items": _items,
    "prefixItems": _prefix_items,
    "anyOf": _any_of,
    "pattern": _pattern_check,
    "minimum": _bound(lambda v, a: v >= a),
    "maximum": _bound(lambda v, a: v <= a),
    "exclusiveMinimum": _bound(lambda v, a: v > a),
    "exclusiveMaximum": _bound(lambda v, a: v < a),
    "minLength": _size(str, lambda n, a: n >= a),
    "maxLength": _size(str, lambda n, a: n <= a),
    "minItems": _size(list, lambda n, a: n >= a),
    "maxItems": _size(list, lambda n, a: n <= a),
    "minProperties": _size(dict, lambda n, a: n >= a),
    "maxProperties": _size(dict, lambda n, a: n <= a),
}
