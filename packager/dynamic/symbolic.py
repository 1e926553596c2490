"""Integer expressions over named symbols: the sizes of dynamic-shape tensors.

Small on purpose: constants, symbols, sums, products, floor/ceil division and max, folded as they
are built so that static shapes stay plain integers. Every operation the shape rules use is
monotone non-decreasing in each symbol when the divisors are positive constants, so the largest
value over a box of bounds is reached at the upper corner (`upper()`); `evaluate` gives the exact
value at one binding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Union

Value = Union[int, "Expr"]


class UnboundSymbol(KeyError):
    """An expression needs a symbol that has no value or bound."""


class Expr:
    def evaluate(self, env: Mapping[str, int]) -> int:
        raise NotImplementedError

    def symbols(self) -> frozenset[str]:
        raise NotImplementedError

    def __add__(self, other: Value) -> Value:
        return add(self, other)

    __radd__ = __add__

    def __mul__(self, other: Value) -> Value:
        return mul(self, other)

    __rmul__ = __mul__


@dataclass(frozen=True)
class Sym(Expr):
    name: str

    def evaluate(self, env: Mapping[str, int]) -> int:
        if self.name not in env:
            raise UnboundSymbol(self.name)
        return int(env[self.name])

    def symbols(self) -> frozenset[str]:
        return frozenset({self.name})

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class _Nary(Expr):
    op: str  # "+", "*", "max"
    args: tuple[Value, ...]

    def evaluate(self, env: Mapping[str, int]) -> int:
        vals = [evaluate(a, env) for a in self.args]
        if self.op == "+":
            return sum(vals)
        if self.op == "*":
            return math.prod(vals)
        return max(vals)

    def symbols(self) -> frozenset[str]:
        return frozenset().union(*(symbols(a) for a in self.args))

    def __str__(self) -> str:
        if self.op == "max":
            return f"max({', '.join(map(_paren, self.args))})"
        text = f" {self.op} ".join(_paren(a, self.op) for a in self.args)
        return text.replace("+ -", "- ")


@dataclass(frozen=True)
class _Div(Expr):
    num: Value
    den: int
    ceil: bool

    def evaluate(self, env: Mapping[str, int]) -> int:
        n = evaluate(self.num, env)
        return -(-n // self.den) if self.ceil else n // self.den

    def symbols(self) -> frozenset[str]:
        return symbols(self.num)

    def __str__(self) -> str:
        num = f"({self.num})" if isinstance(self.num, _Nary) else str(self.num)
        return f"{'ceil' if self.ceil else 'floor'}({num} / {self.den})"


def _paren(v: Value, outer: str = "") -> str:
    if isinstance(v, _Nary) and v.op == "+" and outer == "*":
        return f"({v})"
    return str(v)


def evaluate(v: Value, env: Mapping[str, int]) -> int:
    return v if isinstance(v, int) else v.evaluate(env)


def symbols(v: Value) -> frozenset[str]:
    return frozenset() if isinstance(v, int) else v.symbols()


def add(*vs: Value) -> Value:
    const, terms = 0, []
    for v in vs:
        if isinstance(v, int):
            const += v
        elif isinstance(v, _Nary) and v.op == "+":
            for a in v.args:
                if isinstance(a, int):
                    const += a
                else:
                    terms.append(a)
        else:
            terms.append(v)
    if not terms:
        return const
    args = tuple(terms) + ((const,) if const else ())
    return args[0] if len(args) == 1 else _Nary("+", args)


def mul(*vs: Value) -> Value:
    const, factors = 1, []
    for v in vs:
        if isinstance(v, int):
            const *= v
        elif isinstance(v, _Nary) and v.op == "*":
            for a in v.args:
                if isinstance(a, int):
                    const *= a
                else:
                    factors.append(a)
        else:
            factors.append(v)
    if const == 0 or not factors:
        return const
    args = ((const,) if const != 1 else ()) + tuple(factors)
    return args[0] if len(args) == 1 else _Nary("*", args)


def _exact_quotient(num: Value, den: int) -> Value | None:
    """num / den when den divides num's constant factor (then floor and ceil agree)."""
    if isinstance(num, _Nary) and num.op == "*" and isinstance(num.args[0], int) and num.args[0] % den == 0:
        return mul(num.args[0] // den, *num.args[1:])
    return None


def floordiv(num: Value, den: int) -> Value:
    if den <= 0:
        raise ValueError("divisor must be a positive constant")
    if isinstance(num, int):
        return num // den
    if den == 1:
        return num
    exact = _exact_quotient(num, den)
    return exact if exact is not None else _Div(num, den, ceil=False)


def ceildiv(num: Value, den: int) -> Value:
    if den <= 0:
        raise ValueError("divisor must be a positive constant")
    if isinstance(num, int):
        return -(-num // den)
    if den == 1:
        return num
    exact = _exact_quotient(num, den)
    return exact if exact is not None else _Div(num, den, ceil=True)


def maximum(*vs: Value) -> Value:
    consts = [v for v in vs if isinstance(v, int)]
    rest = list(dict.fromkeys(v for v in vs if not isinstance(v, int)))
    if not rest:
        return max(consts)
    args = tuple(rest) + ((max(consts),) if consts else ())
    return args[0] if len(args) == 1 else _Nary("max", args)


def upper(v: Value, bounds: Mapping[str, tuple[int, int]]) -> int:
    """The largest value over all bindings inside `bounds` (name -> (min, max))."""
    return evaluate(v, {name: hi for name, (_, hi) in bounds.items()})


def product(vs) -> Value:
    return mul(*vs) if vs else 1


def _factors(v: Value) -> tuple[int, list[Value]]:
    """A value as (constant factor, other factors)."""
    if isinstance(v, int):
        return v, []
    if isinstance(v, _Nary) and v.op == "*":
        const = v.args[0] if isinstance(v.args[0], int) else 1
        return const, [a for a in v.args if not isinstance(a, int)]
    return 1, [v]


def divide_exact(num: Value, den: Value) -> Value | None:
    """num / den when every factor of den is a factor of num (and the constants divide): the
    quotient of a product by part of itself, e.g. (16 * seq) / seq = 16. None otherwise."""
    n_const, n_factors = _factors(num)
    d_const, d_factors = _factors(den)
    if d_const <= 0 or n_const % d_const:
        return None
    rest = list(n_factors)
    for f in d_factors:
        if f not in rest:
            return None
        rest.remove(f)
    return mul(n_const // d_const, *rest)


def least_value(v: Value, name: str, at_least: int, limit: int = 2**31) -> int | None:
    """The smallest value of symbol `name` (1..limit) at which the single-symbol expression `v`,
    non-decreasing in it (products, sums, floors and ceilings of positive terms are), reaches
    `at_least`; None when it never does."""
    if evaluate(v, {name: limit}) < at_least:
        return None
    lo, hi = 1, limit
    while lo < hi:
        mid = (lo + hi) // 2
        if evaluate(v, {name: mid}) >= at_least:
            hi = mid
        else:
            lo = mid + 1
    return lo
