"""Expression attacks: code payloads and heavy formulas in parameters."""
from __future__ import annotations

from hostile.cases.base import (ANY, BAD, Corpus, MARK, blk, doc, lag)


# Category: expression attacks


CODE_PAYLOADS = {
    "import-system": f"__import__('os').system('touch {MARK}')",
    "open": f"open('{MARK}', 'w')",
    "eval": f"eval(\"open('{MARK}', 'w')\")",
    "exec": "exec('import os')",
    "subclasses": "().__class__.__bases__[0].__subclasses__()",
    "comprehension": "[c for c in ().__class__.__base__.__subclasses__()]",
    "lambda-call": f"(lambda: open('{MARK}', 'w'))()",
    "attribute": "tau.__class__",
    "builtins": "__builtins__",
    "globals": "globals()",
    "fstring": f"f'{{open(\"{MARK}\", \"w\")}}'",
    "format-method": "'{0.__class__}'.format(1)",
    "percent-format": "'%s' % 1",
    "dunder-import-name": "__import__",
    "np-attr": "np.exp(1)",
    "math-attr": "math.pi",
    "function-globals": "sin.__globals__",
    "walrus": "(x := 1)",
    "statement": "1; import os",
    "import": "import os",
    "leading-newline": f"\n__import__('os').system('touch {MARK}')",
    "comment-only": "# nothing",
    "lambda": "lambda x: x",
    "dict": "{1: 2}", "set": "{1}", "slice": "[1, 2][0:1]", "matmul": "[1] @ [1]",
    "floordiv": "7 // 2", "invert": "~1", "shift": "1 << 1000", "xor": "2 ^ 3",
    "name-True": "1 if True else 0", "yield": "(yield 1)", "await": "await x",
    "starred": "max(*[1, 2])", "keyword-arg": "round(1.5, ndigits=1)", "print": "print(1)",
    "string-repeat": "'a' * 10**9", "bytes": "b'abc'", "complex": "1j", "ellipsis": "...",
    "is": "1 is 1", "in": "1 in [1]", "getattr": "getattr(1, 'real')",
    "type-call": "type(1)", "breakpoint": "breakpoint()", "vars": "vars()",
    "dunder-name": "__name__", "unicode-name": "\u03c0 * 2", "fullwidth-sin": "\uff53in(1)",
    "nbsp": "1\u00a0+ 1", "rtl": "\u202e1 + 1", "nul": "1 +\x00 1",
    "surrogate": "1 + \udcff",
}
HEAVY_PAYLOADS = {
    "pow-tower": "10**10**10", "pow-tower-9": "9**9**9**9", "pow-1024": "2**1024",
    "overflow-mul": "1e308 * 10", "overflow-neg": "-1e308 * 10",
    "deep-parens": "(" * 1000 + "1" + ")" * 1000, "deep-parens-90": "(" * 90 + "1" + ")" * 90,
    "long-sum": "1+" * 4999 + "1", "long-unary": "-" * 9000 + "1",
    "deep-lists": "[" * 3000 + "]" * 3000, "too-long": "1" * 10_001,
    "zeros-1e9": "zeros(1e9)", "ones-1e7": "ones(10**7)", "linspace-1e12": "linspace(0, 1, 1e12)",
    "sum-of-huge": "sum(ones(1e7) * ones(1e7))", "repeat-list": "[1] * 1000000000",
    "div-zero": "1/0", "zero-div-zero": "0/0", "log-0": "log(0)", "sqrt-minus-1": "sqrt(-1)",
    "mod-0": "mod(1, 0)", "zero-pow-minus-1": "0**-1", "inf-minus-inf": "inf - inf",
    "inf-times-0": "inf * 0", "exp-1000": "exp(1000)", "asin-2": "asin(2)",
    "zeros-negative": "zeros(-1)", "zeros-fraction": "zeros(1.5)", "index-out": "[1, 2][5]",
    "index-fraction": "[1, 2][0.5]", "index-scalar": "1[0]", "max-empty": "max(zeros(0))",
    "ragged": "[[1, 2], [3]]", "int-huge-literal": "1" + "0" * 400, "float-huge": "1e400",
    "many-args": "max(" + ",".join(["1"] * 5000) + ")",
    "hypot-big": "hypot(1e308, 1e308)", "linspace-nan": "linspace(0, inf, 3)",
    "pi-name": "pi", "e-name": "e", "inf-name": "inf",
    "bidi-comment": "1 # \u202e ) + open('x')",  # a comment: the value is 1 (Trojan Source)
}


def expressions(c: Corpus) -> None:
    cat = "expressions"
    payloads = {**{f"code-{k}": (v, True) for k, v in CODE_PAYLOADS.items()},
                **{f"heavy-{k}": (v, False) for k, v in HEAVY_PAYLOADS.items()}}

    def gain_in_file(value):
        d = lag()
        d["blocks"][3]["params"]["k"] = value
        return d, [], ("fb", "k")

    def parameter_in_file(value):
        d = lag()
        d["parameters"]["tau"] = value
        return d, [], ("tau",)

    def set_value(value):
        return lag(), ["--set", f"tau={value}"], ("tau",)

    def formula(value):
        d = doc([blk("c", "Clock"), blk("f", "Expression", formula=value),
                 blk("y", "Output")], [("c.y", "f.u"), ("f.y", "y.u")], stop=1.0)
        return d, [], ("f", "formula")

    def mux_inputs(value):
        d = doc([blk("c", "Constant"), blk("m", "Mux", inputs=value), blk("y", "Output")],
                [("c.y", "m.u1"), ("m.y", "y.u")], stop=1.0)
        return d, [], ("m", "inputs")

    def switch_threshold(value):
        d = doc([blk("c", "Clock"), blk("s", "Switch", threshold=value), blk("y", "Output")],
                [("c.y", "s.u1"), ("c.y", "s.u2"), ("c.y", "s.u3"), ("s.y", "y.u")], stop=1.0)
        return d, [], ("s", "threshold")

    def subsystem_parameter(value):
        d = doc([{"id": "s", "type": "Subsystem", "diagram": {
            "parameters": {"k": value},
            "blocks": [blk("c", "Constant", value="k"), blk("o", "Outport")],
            "wires": [{"src": "c.y", "dst": "o.u"}]}}, blk("y", "Output")], [("s.o", "y.u")],
            stop=1.0)
        return d, [], ("k",)

    points = {"gain": gain_in_file, "param": parameter_in_file, "set": set_value,
              "formula": formula, "mux-inputs": mux_inputs, "switch": switch_threshold,
              "subsystem-param": subsystem_parameter}
    for pname, make in points.items():
        for name, (value, is_code) in payloads.items():
            if pname == "set" and "\x00" in value:
                continue  # a NUL cannot be passed on a command line
            if not is_code and pname in ("param", "switch", "subsystem-param"):
                continue  # the heavy payloads evaluate alike there: once per kind is enough
            d, args, words = make(value)
            exits = BAD if is_code else ANY
            mentions = words if is_code else ()
            if is_code and name in ("code-fullwidth-sin", "code-unicode-name"):
                exits, mentions = ANY, ()  # NFKC makes them plain names: may be valid or not
            if "\udcff" in value and pname != "set":
                mentions = ()  # a lone surrogate cannot be UTF-8: the file itself is refused
            c.run_case(cat, f"{pname}/{name}", d, ["-q", *args], exits=exits, mentions=mentions,
                       note="the payload must be refused, never run")
    # text parameters that reach generated code
    injections = {
        "inputs-dunder": ("Expression", {"inputs": "__builtins__", "formula": "__builtins__"}),
        "inputs-import": ("Expression", {"inputs": "__import__", "formula": "__import__ + 1"}),
        "inputs-code": ("Expression", {"inputs": f"u); open('{MARK}', 'w'); (u",
                                       "formula": "u"}),
        "inputs-newline": ("Expression", {"inputs": "u\nimport os", "formula": "u"}),
        "inputs-keyword": ("Expression", {"inputs": "class", "formula": "1"}),
        "inputs-empty": ("Expression", {"inputs": "", "formula": "1"}),
        "inputs-commas": ("Expression", {"inputs": ",,,", "formula": "1"}),
        "inputs-repeat": ("Expression", {"inputs": "u, u", "formula": "u"}),
        "inputs-pi": ("Expression", {"inputs": "pi", "formula": "pi"}),
        "formula-string-escape": ("Expression", {"formula": "u\" + open('x') + \""}),
        "formula-triple-quote": ("Expression", {"formula": "'''"}),
        "formula-backslash": ("Expression", {"formula": "u \\\n + 1"}),
        "formula-tab": ("Expression", {"formula": "\tu"}),
        "formula-empty": ("Expression", {"formula": ""}),
        "signs-code": ("Sum", {"signs": "+-'); open('x"}),
        "ops-code": ("Product", {"ops": "*/'); import os; ('"}),
        "function-code": ("MathFunction", {"function": "exp(u); open('x')"}),
        "operator-code": ("CompareToConstant", {"operator": "<= 0 or open('x') or u"}),
        "criterion-code": ("Switch", {"criterion": "u2 >= a or __import__('os')"}),
        "extrapolation-code": ("LookupTable1D", {"extrapolation": "linear; import os"}),
    }
    for name, (btype, params) in injections.items():
        d = doc([blk("c", "Clock"), blk("b", btype, **params), blk("y", "Output")], [], stop=1.0)
        c.run_case(cat, f"text/{name}", d, ["-q"], exits=BAD, mentions=("b",),
                   note="text that reaches generated code must be refused or quoted")
    # names that collide with the generated code's own names: valid diagrams
    for name in ("x", "t", "dx", "m", "g", "z", "zo", "zn", "ev", "np", "math", "changed",
                 "init", "y", "self", "u", "out", "_", "__builtins__", "print"):
        d = doc([blk("c", "Clock"), blk("s", "Sine"),
                 blk("f", "Expression", inputs=f"{name}, other", formula=f"{name} + 2 * other"),
                 blk("out1", "Output")],
                [("c.y", f"f.{name}"), ("s.y", "f.other"), ("f.y", "out1.u")], stop=1.0,
                output_interval=0.1)
        c.run_case(cat, f"input-named/{name}", d, ["-q"], exits=(0,),
                   note="an input name that is also a name of the generated code")
        d = lag()
        d["parameters"] = {name: 0.5}
        d["blocks"][3]["params"]["k"] = f"1 / {name}"
        c.run_case(cat, f"parameter-named/{name}", d, ["-q"], exits=(0,) if name not in (
            "__builtins__",) else (0, 2))
    # parameter names that shadow constants and functions
    for name in ("pi", "e", "inf", "sin", "exp", "zeros", "max", "nan", "True", "None",
                 "lambda", "__import__", "__class__", "t"):
        d = lag()
        d["parameters"] = {"tau": 0.5, name: 3}
        d["blocks"][3]["params"]["k"] = f"1 / tau + 0 * {name}" if name not in (
            "True", "None", "lambda") else "1 / tau"
        c.run_case(cat, f"shadow/{name}", d, ["-q"], exits=(0,) if name in ("pi", "e") else ANY,
                   mentions=())
        c.run_case(cat, f"shadow-set/{name}", lag(), ["-q", "--set", f"{name}=3"], exits=BAD,
                   mentions=(name,))
    # parameter graphs: long chains (a recursive resolver meets the recursion limit), wide
    # fans, a subsystem parameter defined by the outer one of the same name
    for n in (500, 5000):
        d = lag()
        d["parameters"] = {"p0": 0.5, **{f"p{i}": f"p{i - 1} + 0" for i in range(1, n)}}
        d["parameters"]["tau"] = f"p{n - 1}"
        c.run_case(cat, f"parameter-chain-{n}", d, ["-q"], exits=(0, 2))
        d = lag()
        d["parameters"] = {f"p{i}": f"p{(i + 1) % n}" for i in range(n)}
        d["parameters"]["tau"] = "p0"
        c.run_case(cat, f"parameter-cycle-{n}", d, ["-q"], exits=BAD, mentions=("cycle",))
    d = lag()
    d["parameters"] = {"tau": 0.5, "big": "+".join(["tau"] * 2400)}
    c.run_case(cat, "parameter-wide-sum", d, ["-q"], exits=(0, 2))  # deep tree: may be refused
    shadow = doc([{"id": "s", "type": "Subsystem", "diagram": {
        "parameters": {"k": "k + 1"},
        "blocks": [blk("c", "Constant", value="k"), blk("o", "Outport")],
        "wires": [{"src": "c.y", "dst": "o.u"}]}}, blk("y", "Output")], [("s.o", "y.u")],
        {"k": 1.0}, stop=1.0)
    c.run_case(cat, "subsystem-parameter-shadows-itself", shadow, ["-q"], exits=(0, 2))
    c.run_case(cat, "subsystem-parameter-shadow-set", shadow, ["-q", "--set", "k=5"],
               exits=(0, 2))
    # integer parameters given as lists or huge values
    for name, value in {"list": "[2, 3]", "repeat": "[2] * 3", "float": 2.5, "negative": -2,
                        "zero": 0, "huge": 1e300, "inf": "inf", "bool": True,
                        "string": "two", "json-list": [2, 3]}.items():
        d = doc([blk("c", "Constant"), blk("m", "Mux", inputs=value), blk("y", "Output")],
                [("c.y", "m.u1"), ("c.y", "m.u2"), ("m.y", "y.u")], stop=1.0)
        c.run_case(cat, f"int-param/{name}", d, ["-q"], exits=ANY)


