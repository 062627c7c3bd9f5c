"""Python constructs named the way their users write them.

Messages that reach users (`explain`, strict mode, logs) describe code in
Python's own syntax: "try/except", "an f-string", "`in`", never the AST class
behind it (`Try`, `JoinedStr`, `In`).
"""

from __future__ import annotations

import ast
_WORDS: dict[type, str] = {
    # statements
    ast.Try: "try/except", ast.TryStar: "try/except*", ast.With: "a with block", ast.AsyncWith: "async with",
    ast.AsyncFor: "async for", ast.Match: "a match statement", ast.ClassDef: "a class definition",
    ast.FunctionDef: "a nested def", ast.AsyncFunctionDef: "a nested async def", ast.Delete: "del",
    ast.Import: "import", ast.ImportFrom: "import", ast.Raise: "raise", ast.While: "a while loop",
    ast.For: "a for loop", ast.Break: "break", ast.Continue: "continue", ast.Return: "return",
    # expressions
    ast.JoinedStr: "an f-string", ast.FormattedValue: "an f-string", ast.Lambda: "a lambda",
    ast.GeneratorExp: "a generator expression", ast.ListComp: "a list comprehension",
    ast.SetComp: "a set comprehension", ast.DictComp: "a dict comprehension", ast.Set: "a set display",
    ast.Dict: "a dict display", ast.Yield: "yield", ast.YieldFrom: "yield from", ast.Await: "await",
    ast.NamedExpr: "an assignment expression (:=)", ast.Starred: "*-unpacking",
    ast.IfExp: "a conditional expression (a if c else b)", ast.Slice: "a slice",
    ast.Subscript: "a subscript", ast.Attribute: "an attribute", ast.Name: "a name", ast.Tuple: "a tuple",
    ast.List: "a list", ast.Call: "a call",
    # operators
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.MatMult: "@", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^",
    ast.BitAnd: "&", ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", ast.Not: "not", ast.Invert: "~",
    ast.UAdd: "unary +", ast.USub: "unary -", ast.And: "and", ast.Or: "or",
}
_OPERATORS = (ast.operator, ast.cmpop, ast.unaryop, ast.boolop)


def construct(node: ast.AST | type) -> str:
    """`node` (or an AST class) as Python code calls it: "try/except", "`in`", "an f-string"."""
    cls = node if isinstance(node, type) else type(node)
    if issubclass(cls, _OPERATORS):
        return f"`{symbol(cls)}`"
    word = _WORDS.get(cls)
    if word is not None:
        return word
    if isinstance(node, ast.AST):
        return f"`{_first_line(ast.unparse(node))}`"
    return f"the {cls.__name__.lower()} construct"


def symbol(op: type) -> str:
    """The source text of an operator class: `+` for ast.Add, `not in` for ast.NotIn."""
    return _WORDS.get(op, op.__name__)


def _first_line(text: str, width: int = 40) -> str:
    line = text.splitlines()[0] if text else ""
    return line if len(line) <= width else line[:width - 3] + "..."

