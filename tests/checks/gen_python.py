"""Variants of Python's own crash classes in notebooks: undefined or deleted names, attributes that do
not exist (removed APIs, None left by an in-place call), calls/subscripts/len on values whose type has
no such protocol, positions past the end, keys and list elements that are not there."""

from __future__ import annotations

from variants import ONCE, Spec, State

NAMINGS = [
    {"x": "total", "f": "clean_text", "d": "config", "lst": "features", "df": "df"},
    {"x": "score", "f": "tokenize", "d": "params", "lst": "cols", "df": "train"},
    {"x": "n_rows", "f": "normalize", "d": "settings", "lst": "names", "df": "data"},
]

SPECS = [
    Spec(
        rule="undefined-name",
        generator="python-undefined-name",
        states=[
            State("never-defined", "import math", crash=True),
            State("defined", "def $f(s):\n    return str(s).lower()", crash=False),
        ],
        forms=[
            "$f('Hello World')",
            "words = [$f(w) for w in ['A', 'B']]",
            "result = list(map($f, ['A']))",
            "print(f\"{$f('X')}\")",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="undefined-name",
        generator="python-deleted-name",
        states=[State("kernel", "$lst = [1, 2, 3]", crash=True)],
        forms=[
            "del $lst\nlen($lst)",
            "backup = $lst\ndel $lst\nprint($lst)",
            ("del $lst\n$lst = [4]\nlen($lst)", False),
            ("len($lst)\ndel $lst", False),
        ],
        namings=NAMINGS,
        flows=ONCE,
    ),
    Spec(
        rule="missing-attribute",
        generator="python-none-after-inplace",
        common="import numpy as np\nimport pandas as pd",
        states=[
            State(
                "assigned-none",
                "$df = pd.DataFrame({'a': [1.0, None, 3.0], 'b': ['x', 'y', 'z']})\n"
                "$df = $df.dropna(inplace=True)",
                crash=True,
            ),
            State("sorted-none", "$lst = [3, 1, 2]\n$df = $lst.sort()", crash=True),
            State(
                "frame",
                "$df = pd.DataFrame({'a': [1.0, None, 3.0], 'b': ['x', 'y', 'z']})\n$df = $df.dropna()",
                crash=False,
            ),
        ],
        forms=["$df.head()", "$df.shape", "rows = $df.count()\nrows", "print($df.columns)"],
        namings=NAMINGS,
    ),
    Spec(
        rule="type-error",
        generator="python-not-callable",
        states=[
            State("number", "$x = 0.91\n$lst = [1, 2, 3]", crash=True),
            State("list", "$x = [0.5, 0.7]\n$lst = [1, 2, 3]", crash=True),
            State("function", "$x = max\n$lst = [1, 2, 3]", crash=False),
        ],
        forms=["$x($lst)", "print($x($lst))", "values = [$x(v) for v in [$lst]]", "r = $x($lst) + 1"],
        namings=NAMINGS,
    ),
    Spec(
        rule="type-error",
        generator="python-shadowed-builtin",
        states=[
            State("shadowed", "sum = 0\nfor v in [1, 2]:\n    sum += v\n$lst = [1, 2, 3]", crash=True),
            State("intact", "$lst = [1, 2, 3]", crash=False),
        ],
        forms=[
            "sum($lst) if True else str($lst)",
            "print(sum($lst), str($lst))",
            "total = sum($lst) + len(str($lst))",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="type-error",
        generator="python-data-attribute-called",
        common="import numpy as np\nimport pandas as pd",
        states=[
            State("frame", "$df = pd.DataFrame({'a': range(5), 'b': range(5)})", crash=True),
            State("array", "$df = np.ones((5, 2))", crash=True),
        ],
        forms=[
            "$df.shape()",
            "rows, cols = $df.shape()",
            "print($df.shape())",
            "$df.ndim()",
            ("$df.shape", False),
            ("rows = $df.shape[0]", False),
            ("len($df)", False),
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="type-error",
        generator="python-not-subscriptable",
        common="import numpy as np",
        states=[
            State("none", "$d = None", crash=True),
            State("number", "$d = 12", crash=True),
            State("function", "def $d(key):\n    return key", crash=True),
            State("dict", "$d = {'lr': 0.1, 'epochs': 3}", crash=False),
        ],
        forms=["$d['lr']", "lr = $d['lr']", "print($d['epochs'])", "rate = float($d['lr']) * 2"],
        namings=NAMINGS,
    ),
    Spec(
        rule="type-error",
        generator="python-no-len",
        states=[
            State("int", "$x = 42", crash=True),
            State("none", "$x = None", crash=True),
            State("list", "$x = [1, 2]", crash=False),
        ],
        forms=[
            "len($x)",
            "for i in range(len($x)):\n    pass",
            "for v in $x:\n    print(v)",
            "list($x)",
            "sorted($x)",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="index-out-of-range",
        generator="python-list-index",
        states=[
            State("short", "$lst = ['a', 'b']", crash=True),
            State("empty", "$lst = []", crash=True),
            State("long", "$lst = ['a', 'b', 'c', 'd', 'e', 'f']", crash=False),
        ],
        forms=[
            "$lst[3]",
            "first, fourth = $lst[0], $lst[3]",
            "print($lst[-4])",
            "$lst[len($lst) + 2 - len($lst)]",
            "name = $lst[5]\nname",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="missing-key",
        generator="python-dict-key",
        states=[
            State("renamed", "$d = {'learning_rate': 0.1, 'epochs': 3}", crash=True),
            State("present", "$d = {'lr': 0.1, 'epochs': 3}", crash=False),
        ],
        forms=[
            "$d['lr']",
            "rate = $d['lr'] * 10",
            "print(f\"lr={$d['lr']}\")",
            "[$d['lr'] for _ in range(2)]",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="bad-value",
        generator="python-list-remove",
        states=[
            State("absent", "$lst = ['age', 'fare', 'sex']", crash=True),
            State("present", "$lst = ['age', 'fare', 'sex', 'target']", crash=False),
        ],
        forms=["$lst.remove('target')", "$lst.index('target')", "pos = $lst.index('target')\npos"],
        namings=NAMINGS,
        flows=ONCE,
    ),
]
