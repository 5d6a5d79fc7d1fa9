"""A fast yes/no check of a document against the diagram schema, for the common case.

jsonschema builds a validator object for every node it descends into: checking a
10,000-block file takes over a second, nearly all of it for files that are valid. This
module walks the same schema (`resources/diagram.schema.json`, still the single source)
with plain recursion and answers only "valid" or "not sure". The loader trusts "valid" and
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
    implements them); False if it is not, or if this checker cannot tell."""
    try:
        return _check(instance, schema, schema.get("$defs", {}))
    except (_Unknown, RecursionError):
        return False


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


def _check(v: Any, schema: Any, defs: Mapping[str, Any]) -> bool:
    if schema is True:
        return True
    if schema is False or not isinstance(schema, dict):
        raise _Unknown(schema)
    for key, arg in schema.items():
        if key in _ANNOTATIONS:
            continue
        check = _KEYWORDS.get(key)
        if check is None:
            raise _Unknown(key)
        if not check(v, arg, schema, defs):
            return False
    return True


def _ref(v, arg, schema, defs) -> bool:
    if not (isinstance(arg, str) and arg.startswith("#/$defs/")) or arg[8:] not in defs:
        raise _Unknown(arg)
    return _check(v, defs[arg[8:]], defs)


def _type(v, arg, schema, defs) -> bool:
    names = [arg] if isinstance(arg, str) else arg
    if any(name not in _TYPES for name in names):
        raise _Unknown(arg)
    return any(_TYPES[name](v) for name in names)


def _properties(v, arg, schema, defs) -> bool:
    if not isinstance(v, dict):
        return True
    return all(_check(v[k], sub, defs) for k, sub in arg.items() if k in v)


def _additional(v, arg, schema, defs) -> bool:
    if not isinstance(v, dict):
        return True
    if "patternProperties" in schema:
        raise _Unknown("patternProperties")
    known = schema.get("properties", {})
    extra = [k for k in v if k not in known]
    if arg is True:
        return True
    if arg is False:
        return not extra
    return all(_check(v[k], arg, defs) for k in extra)


def _property_names(v, arg, schema, defs) -> bool:
    return not isinstance(v, dict) or all(_check(k, arg, defs) for k in v)


def _required(v, arg, schema, defs) -> bool:
    return not isinstance(v, dict) or all(k in v for k in arg)


def _items(v, arg, schema, defs) -> bool:
    if not isinstance(v, list):
        return True
    rest = v[len(schema.get("prefixItems", ())):]
    if len(rest) > 16:  # a long numeric array (a table): one verdict for all its numbers
        verdict = _number_verdict(arg, defs)
        if verdict is not None and all(type(item) in (float, int) for item in rest):
            return verdict
    return all(_check(item, arg, defs) for item in rest)


# Keywords that constrain only arrays, objects or strings: every number passes them.
_NOT_FOR_NUMBERS = frozenset(("items", "prefixItems", "properties", "additionalProperties",
                              "propertyNames", "required", "pattern", "minLength", "maxLength",
                              "minItems", "maxItems"))


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


def _prefix_items(v, arg, schema, defs) -> bool:
    return not isinstance(v, list) or all(_check(item, sub, defs) for item, sub in zip(v, arg))


def _any_of(v, arg, schema, defs) -> bool:
    return any(_check(v, sub, defs) for sub in arg)


def _pattern_check(v, arg, schema, defs) -> bool:
    return not isinstance(v, str) or _pattern(arg).search(v) is not None


def _bound(test: Callable[[float, float], bool]):
    def check(v, arg, schema, defs) -> bool:
        return not _is_number(v) or test(v, arg)
    return check


def _size(kind: type, test: Callable[[int, int], bool]):
    def check(v, arg, schema, defs) -> bool:
        return not isinstance(v, kind) or test(len(v), arg)
    return check


_KEYWORDS: dict[str, Callable[[Any, Any, dict, Mapping[str, Any]], bool]] = {
    "$ref": _ref,
    "type": _type,
    "const": lambda v, arg, schema, defs: _equal(v, arg),
    "enum": lambda v, arg, schema, defs: any(_equal(v, e) for e in arg),
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
}
