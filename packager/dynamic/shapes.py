"""Dynamic shapes: symbolic sizes, the planning passes, and the static worst-case plan.

Every resizable input dimension (-1 in `shape_signature`) becomes a named symbol; sizes propagate
through the graph as expressions (shape_rules.py). An op whose output size is not a function of
its input shapes gives that output fresh symbols, known only after the op runs, bounded where a
bound follows from the op (WHERE, UNIQUE: the input's element count) or from the user.

Passes (the paper's prescription): pass 0 holds the tensors whose size is fixed in the file, pass 1
those known once the inputs are bound, and pass k+1 those known after the k-th data-dependent op
runs. Each pass is planned with everything placed by earlier passes fixed, so a runtime can keep
earlier offsets and re-plan a later pass at the real sizes; with every symbol bounded, the same
passes at the largest sizes give one static plan valid for every allowed binding (sizes only
shrink below the bounds and lifetimes do not depend on sizes).
"""

from __future__ import annotations

import math

import re
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

import numpy as np

from packager.errors import PackagerError
from packager.lifetimes import ArenaLifetimes
from packager.model import ELEMENT_BITS, Model, Subgraph, derived
from packager.plan.offsets._gaps import offset_plan, place_in_order
from packager.plan.records import OffsetPlan, UsageRecord, align_up, offset_lower_bound
from packager.semantics import SEMANTICS
from packager.size_limits import MAX_TENSOR_BYTES, human_bytes
from packager.dynamic.shape_rules import RULES, VALUE_RULES, Shape
from packager.plan.validate import check_offset_plan
from packager.dynamic.symbolic import (Sym, UnboundSymbol, Value, ceildiv, evaluate, floordiv, least_value, mul,
                                       product, symbols, upper)

MAX_VALUE_ELEMENTS = 64  # small integer tensors (shapes, axes) are read by value


class DimError(PackagerError):
    """A --dim is malformed, names no symbol, or a symbol needed for a static plan has no bound."""


@dataclass(frozen=True)
class Symbol:
    name: str
    source: str  # "input 'x' axis 0" or "output 1 of op 12 (WHERE)"
    data_dependent: bool
    pass_index: int  # 1 for input symbols; 2, 3, ... in the order their ops run
    derived_bound: Value | None = None  # an upper bound following from the op (an expression)
    pinned: int | None = None  # the one value the graph allows (a fixed-shape RESHAPE of it)
    pinned_by: str = ""  # the op that fixes it, in words
    stored_unknown: str = ""  # "'x' [-1, 8]" when the file stores the dimension as -1 (no size at all)


@dataclass(frozen=True)
class DimConstraint:
    """What the graph requires of the symbols: `value` >= 1 (a dimension the runtime allocates) or
    `value` == `equals` (a RESHAPE keeps the element count)."""
    value: Value
    equals: int | None
    where: str  # "dimension 0 of 'r' (op 3, RESHAPE)"


@dataclass(frozen=True)
class DynamicShapes:
    subgraph: int
    symbols: tuple[Symbol, ...]
    shapes: Mapping[int, Shape]  # tensor -> shape expressions
    sizes: Mapping[int, Value]  # tensor -> bytes (expression)
    passes: Mapping[int, int]  # tensor -> pass
    constraints: tuple[DimConstraint, ...] = ()
    names: Mapping[int, str] = field(default_factory=dict)  # tensor -> name, for messages

    @property
    def is_dynamic(self) -> bool:
        return bool(self.symbols)

    def symbol(self, name: str) -> Symbol:
        for s in self.symbols:
            if s.name == name:
                return s
        raise KeyError(name)


def _identifier(text: str) -> str:
    ident = re.sub(r"[^A-Za-z0-9_]", "_", text).strip("_") or "t"
    return ident if not ident[0].isdigit() else f"t_{ident}"


class _Context:
    def __init__(self, model: Model, sg: Subgraph):
        self.model, self.sg = model, sg
        self.shapes: dict[int, Shape] = {}
        self.values: dict[int, list[Value]] = {}

    def shape(self, t: int) -> Shape:
        return self.shapes.get(t, self.sg.tensors[t].shape)

    def value(self, t: int) -> list[Value] | None:
        if t < 0:
            return None
        if t in self.values:
            return self.values[t]
        tensor = self.sg.tensors[t]
        if tensor.is_constant and tensor.type in ("INT32", "INT64") and tensor.num_elements <= MAX_VALUE_ELEMENTS:
            raw = self.model.buffer_bytes(tensor.buffer)
            dtype = "<i4" if tensor.type == "INT32" else "<i8"
            if len(raw) == tensor.num_elements * np.dtype(dtype).itemsize:
                return [int(v) for v in np.frombuffer(raw, dtype=dtype)]
        return None


def is_static(model: Model, subgraph: int = 0) -> bool:
    """True when the analysis can give no symbol: no tensor of the subgraph has a resizable
    dimension (symbols start at resizable inputs, or at outputs the file marks resizable, and
    only spread from there). A look at the shape signatures, without the analysis; once per
    model and subgraph (a command asks several times)."""
    return derived(model, ("dynamic.shapes.is_static", subgraph),
                   lambda: not any(t.shape_signature is not None and t.is_dynamic_shape
                                   for t in model.subgraphs[subgraph].tensors))


def analyse(model: Model, subgraph: int = 0, renames: Mapping[str, str] | None = None) -> DynamicShapes:
    """Symbolic shapes, byte sizes and passes of every non-constant tensor of a subgraph: once per
    model, subgraph and renames (a command asks when planning and again when checking the plan)."""
    renames = dict(renames or {})
    key = ("dynamic.shapes.analyse", subgraph, tuple(sorted(renames.items())))
    return derived(model, key, lambda: _analyse(model, subgraph, renames))


def _analyse(model: Model, subgraph: int, renames: dict[str, str]) -> DynamicShapes:
    sg = model.subgraphs[subgraph]
    ctx = _Context(model, sg)
    syms: list[Symbol] = []
    used_names: set[str] = set()

    def new_symbol(default: str, **kw) -> Sym:
        name = renames.get(default, default)
        base, k = name, 2
        while name in used_names:
            name, k = f"{base}_{k}", k + 1
        used_names.add(name)
        syms.append(Symbol(name=name, **kw))
        return Sym(name)

    for t in sg.inputs:
        tensor = sg.tensors[t] if t >= 0 else None
        if tensor is None or tensor.shape_signature is None:
            continue
        dims = []
        stored = _stored_text(tensor) if tensor.unknown_axes else ""
        for axis, (d, sig) in enumerate(zip(tensor.shape, tensor.shape_signature)):
            dims.append(new_symbol(f"{_identifier(tensor.name)}_{axis}", source=f"input '{tensor.name}' axis {axis}",
                                   data_dependent=False, pass_index=1,
                                   stored_unknown=stored if axis in tensor.unknown_axes else "")
                        if sig < 0 else d)
        ctx.shapes[t] = tuple(dims)

    data_ops = 0
    constraints: list[DimConstraint] = []
    for op in sg.operators:
        if VALUE_RULES.get(op.name) and len(op.outputs) == 1:
            try:
                v = VALUE_RULES[op.name](op, ctx)
            except (IndexError, ValueError, ZeroDivisionError, TypeError):
                v = None
            if v is not None and len(v) <= MAX_VALUE_ELEMENTS:
                ctx.values[op.outputs[0]] = v
        # No symbol yet (only new_symbol makes one): every shape so far is numbers.
        symbolic_inputs = bool(syms) and any(symbols(d) for t in op.inputs if t >= 0 for d in ctx.shape(t))
        shapes = None
        if op.name in RULES:
            try:
                shapes = RULES[op.name](op, ctx)
            except (IndexError, ValueError, ZeroDivisionError, TypeError, KeyError):
                shapes = None
        if shapes is None and op.name == "RESHAPE":
            shapes = _reshape_from_file(op, ctx)
        if shapes is not None and len(shapes) == len(op.outputs):
            for t, s in zip(op.outputs, shapes):
                if t >= 0:
                    ctx.shapes[t] = tuple(s)
            if syms:  # without a symbol no dimension can be constrained
                constraints += _constraints_of(op, ctx, data_dependent={x.name for x in syms if x.data_dependent})
            continue
        outputs = [t for t in op.outputs if t >= 0]
        resizable = [t for t in outputs if sg.tensors[t].is_dynamic_shape]
        if not symbolic_inputs and not resizable:
            continue  # static in, static out: trust the file
        if not resizable and op.name not in RULES:
            continue  # an op we do not model whose outputs the file declares fixed
        # Data-dependent: each resizable output dimension is known only after the op runs.
        data_ops += 1
        bound = _derived_bound(op, ctx)
        for k, t in enumerate(op.outputs):
            if t < 0:
                continue
            tensor = sg.tensors[t]
            sig = tensor.shape_signature or tuple(-1 if symbolic_inputs else d for d in tensor.shape)
            ctx.shapes[t] = tuple(
                new_symbol(f"{_identifier(op.name.lower())}{op.index}_out{k}_{axis}",
                           source=f"output {k} axis {axis} of op {op.index} ({op.name})",
                           data_dependent=True, pass_index=1 + data_ops,
                           derived_bound=bound if axis == 0 else None)
                if s < 0 else d for axis, (d, s) in enumerate(zip(tensor.shape, sig)))

    syms = _pin(syms, constraints)
    pass_of = {s.name: s.pass_index for s in syms}
    sizes, passes, shapes = {}, {}, {}
    for tensor in sg.tensors:
        if tensor.is_constant:
            continue
        shape = ctx.shape(tensor.index)
        bits = ELEMENT_BITS[tensor.type]
        if bits is None:
            continue
        if syms:
            size = ceildiv(mul(product(list(shape)), bits), 8) if bits % 8 else mul(product(list(shape)), bits // 8)
            passes[tensor.index] = max((pass_of[n] for n in symbols(size)), default=0)
        else:  # numbers only: the same size in plain integers (mul and ceildiv of numbers)
            count = math.prod(shape)
            size = -(-(count * bits) // 8) if bits % 8 else count * (bits // 8)
            passes[tensor.index] = 0
        shapes[tensor.index] = shape
        sizes[tensor.index] = size
    return DynamicShapes(subgraph=subgraph, symbols=tuple(syms), shapes=shapes, sizes=sizes, passes=passes,
                         constraints=tuple(constraints), names={t: sg.tensors[t].name for t in sizes})


def _stored_text(tensor) -> str:
    """The tensor's shape as the file stores it, -1 where the size is unknown."""
    return f"'{tensor.name}' {[-1 if k in tensor.unknown_axes else d for k, d in enumerate(tensor.shape)]}"


def _reshape_from_file(op, ctx) -> list[Shape] | None:
    """A RESHAPE whose target is computed by ops we do not follow: the file's signature of the
    output still says which dimensions are fixed, and the element count is the input's. One
    resizable dimension is then the count over the fixed ones; none means the output is fixed
    (and pins the input's symbols); two or more stay data-dependent."""
    if not op.inputs or not op.outputs or op.outputs[0] < 0:
        return None
    out = ctx.sg.tensors[op.outputs[0]]
    sig = out.shape_signature or out.shape
    free = [k for k, d in enumerate(sig) if d < 0]
    total = product(list(ctx.shape(op.inputs[0])))
    if len(free) > 1:
        return None
    if not free:
        return [tuple(sig)]
    known = product([d for d in sig if d >= 0])
    if known <= 0:
        return None
    return [tuple(floordiv(total, known) if d < 0 else d for d in sig)]


def _constraints_of(op, ctx, data_dependent: set[str]) -> list[DimConstraint]:
    """Every symbolic dimension of the op's outputs is at least 1 (a data-dependent count may be 0,
    so dimensions that use one are left out); a RESHAPE keeps the element count."""
    found = []
    for t in op.outputs:
        if t < 0:
            continue
        shape = ctx.shape(t)
        for axis, d in enumerate(shape):
            if symbols(d) and not symbols(d) & data_dependent:
                found.append(DimConstraint(d, None, f"dimension {axis} of '{ctx.sg.tensors[t].name}' "
                                                    f"(op {op.index}, {op.name}) is {d}"))
    if op.name == "RESHAPE" and op.inputs and op.outputs[0] >= 0:
        total = product(list(ctx.shape(op.inputs[0])))
        out = product(list(ctx.shape(op.outputs[0])))
        if isinstance(out, int) and not isinstance(total, int):
            found.append(DimConstraint(total, out, f"op {op.index} (RESHAPE) makes '{ctx.sg.tensors[op.outputs[0]].name}' "
                                                   f"{out:,} elements from {total}"))
    return found


def _pin(syms: list[Symbol], constraints: Sequence[DimConstraint]) -> list[Symbol]:
    """Symbols the graph fixes to one value (a fixed-shape RESHAPE of an input): derived, not asked."""
    pins: dict[str, tuple[int, str]] = {}
    by_name = {s.name: s for s in syms}
    for c in constraints:
        names = symbols(c.value)
        if c.equals is None or len(names) != 1:
            continue
        (name,) = names
        if by_name[name].data_dependent or name in pins:
            continue
        v = least_value(c.value, name, c.equals)
        if v is not None and evaluate(c.value, {name: v}) == c.equals:
            pins[name] = (v, c.where)
    return [replace(s, pinned=pins[s.name][0], pinned_by=pins[s.name][1]) if s.name in pins else s
            for s in syms]


def _derived_bound(op, ctx) -> Value | None:
    """An upper bound on the data-dependent count an op produces, where the op implies one."""
    if op.name in ("WHERE", "UNIQUE") and op.inputs:
        return product(list(ctx.shape(op.inputs[0])))
    if op.name == "RESHAPE" and op.inputs and op.outputs and op.outputs[0] >= 0:
        # No dimension of a reshape is more than the element count over the fixed dimensions.
        out = ctx.sg.tensors[op.outputs[0]]
        fixed = product([d for d in (out.shape_signature or out.shape) if d > 0])
        return floordiv(product(list(ctx.shape(op.inputs[0]))), fixed) if fixed > 0 else None
    return None


# -- bindings ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class DimSpec:
    name: str
    rename: str | None
    low: int | None
    high: int | None


def parse_dim(text: str) -> DimSpec:
    """`NAME=V`, `NAME=MIN..MAX`, `NAME=..MAX`, optionally `OLD:NEW=...` to rename a symbol."""
    m = re.fullmatch(r"\s*([A-Za-z_][\w]*)(?::([A-Za-z_]\w*))?\s*(?:=\s*(\d*)\s*(\.\.\s*(\d+))?)?\s*", text)
    if not m:
        raise DimError(f"--dim '{text}': expected NAME=VALUE, NAME=MIN..MAX or OLD:NEW=MIN..MAX")
    name, new, low, dots, high = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)
    if dots is None:
        lo = hi = int(low) if low else None
    else:
        lo, hi = (int(low) if low else None), int(high)
    if lo is not None and hi is not None and lo > hi:
        raise DimError(f"--dim '{text}': minimum {lo} is above maximum {hi}")
    if hi is not None and hi <= 0:
        raise DimError(f"--dim '{text}': sizes must be positive")
    return DimSpec(name, new, lo, hi)


def bounds_of(shapes: DynamicShapes, specs: Sequence[DimSpec]) -> dict[str, tuple[int, int]]:
    """Each symbol's (min, max): fixed by the graph, from --dim, else from the op's derived bound.
    Unbound symbols are left out; `require_bounds` names them. A bound the graph contradicts (a
    value other than the one the graph fixes, or a largest value at which a dimension would be 0)
    is a DimError naming the symbol and the range the graph implies."""
    given, text = {}, {}
    known = {s.name for s in shapes.symbols}
    for spec in specs:
        name = spec.rename or spec.name
        if name not in known:
            raise DimError(f"--dim {spec.name}: no such symbol (symbols: {', '.join(sorted(known)) or 'none'})")
        if spec.high is not None:
            given[name] = (spec.low if spec.low is not None else 1, spec.high)
            text[name] = f"{spec.low if spec.low is not None else 1}..{spec.high}"
    out: dict[str, tuple[int, int]] = {}
    for s in shapes.symbols:  # in order: a derived bound may use earlier symbols
        if s.pinned is not None:
            lo, hi = given.get(s.name, (s.pinned, s.pinned))
            if (lo, hi) != (s.pinned, s.pinned):  # a range claims sizes the graph cannot take
                raise DimError(f"--dim {s.name}={text[s.name]} contradicts the graph: {s.pinned_by}, "
                               f"so {s.name} = {s.pinned}")
            out[s.name] = (s.pinned, s.pinned)
        elif s.name in given:
            out[s.name] = given[s.name]
        elif s.derived_bound is not None and symbols(s.derived_bound) <= set(out):
            out[s.name] = (0, upper(s.derived_bound, out))
    _check_dimensions(shapes, out, text)
    _check_sizes(shapes, out, text)
    return out


def _check_sizes(shapes: DynamicShapes, bounds: Mapping[str, tuple[int, int]], text: Mapping[str, str]) -> None:
    """A bound under which a tensor outgrows what a plan can address is named at once."""
    for t, size in shapes.sizes.items():
        names = symbols(size)
        if not names or not names <= set(bounds):
            continue
        largest = upper(size, bounds)
        if largest > MAX_TENSOR_BYTES:
            given = ", ".join(f"--dim {n}={text[n]}" for n in sorted(names) if n in text) or "the bounds"
            raise DimError(f"{given}: tensor {t} '{shapes.names.get(t, t)}' would need {largest:,} B "
                           f"({human_bytes(largest)}) = {size}; a plan can address at most "
                           f"{MAX_TENSOR_BYTES:,} B (int32 offsets)")


def _check_dimensions(shapes: DynamicShapes, bounds: Mapping[str, tuple[int, int]], text: Mapping[str, str]) -> None:
    """Every dimension must be at least 1 across the bounds: at the smallest binding, or the bounds
    claim sizes the graph cannot take, and above all at the largest, where the plan is made (a
    0 there would plan 0 bytes where the runtime needs more)."""
    for c in shapes.constraints:
        names = symbols(c.value)
        if c.equals is not None or not names or not names <= set(bounds):
            continue
        for end in (1, 0):  # the largest binding first: the plan is made there
            at = {n: bounds[n][end] for n in names}
            if evaluate(c.value, at) >= 1:
                continue
            culprit = next((n for n in sorted(names) if n in text), sorted(names)[0])
            if len(names) == 1:
                least = least_value(c.value, culprit, 1)
                implied = f"the graph implies {culprit} >= {least}" if least else "no value of it works"
            else:
                implied = "the graph needs larger values"
            given = f"--dim {culprit}={text[culprit]}" if culprit in text else f"the bound of {culprit}"
            binding = ", ".join(f"{n} = {v}" for n, v in sorted(at.items()))
            raise DimError(f"{given} contradicts the graph: {c.value} would be 0 at {binding} "
                           f"({c.where.split(' is ')[0]}); {implied}")


def require_bounds(shapes: DynamicShapes, bounds: Mapping[str, tuple[int, int]]) -> None:
    missing = [s for s in shapes.symbols if s.name not in bounds]
    if missing:
        s = missing[0]
        if s.stored_unknown:  # no stored size to fall back on: the size it runs at is needed
            raise DimError(f"tensor {s.stored_unknown.replace(' [', ' is stored with shape [', 1)}: "
                           f"axis {s.source.rsplit(' ', 1)[1]} has no size; give --dim {s.name}=N "
                           f"(the size it runs at)" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
        raise DimError(f"symbol '{s.name}' ({s.source}) has no bound: give --dim {s.name}=MIN..MAX"
                       + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))


def renames_of(specs: Sequence[DimSpec]) -> dict[str, str]:
    return {s.name: s.rename for s in specs if s.rename}


# -- multi-pass planning ----------------------------------------------------------------------

@dataclass(frozen=True)
class PassPlan:
    lifetimes: ArenaLifetimes  # records at their worst-case sizes
    plan: OffsetPlan
    passes: tuple[int, ...]  # per record
    size_expressions: tuple[Value, ...]  # per record
    bounds: Mapping[str, tuple[int, int]]
    lower_bound: int  # at the largest binding


def worst_case_lifetimes(arena: ArenaLifetimes, shapes: DynamicShapes, bounds: Mapping[str, tuple[int, int]]
                         ) -> tuple[ArenaLifetimes, tuple[int, ...], tuple[Value, ...]]:
    """The arena's records at their largest sizes, with each record's pass and size expression.
    Tensors the runtime would allocate dynamically (data-dependent outputs) are planned too."""
    sem = SEMANTICS[arena.semantics]
    # Inline (TFLite Micro) arenas number subgraph 0's tensors as themselves; per-subgraph arenas
    # take expressions only when they plan the analysed subgraph.
    own = arena.inline and shapes.subgraph == 0 or arena.subgraph == shapes.subgraph
    records, passes, exprs = [], [], []
    for r in arena.records:
        expr = shapes.sizes.get(r.tensor, r.size) if own else r.size
        records.append(replace(r, size=align_up(upper(expr, bounds), sem.size_rounding)))
        passes.append(shapes.passes.get(r.tensor, 0) if own else 0)
        exprs.append(expr)
    return replace(arena, records=tuple(records)), tuple(passes), tuple(exprs)


def plan_passes(arena: ArenaLifetimes, shapes: DynamicShapes, bounds: Mapping[str, tuple[int, int]]) -> PassPlan:
    """One static plan valid for every binding inside `bounds`: pass by pass, largest first, each
    record in the smallest gap left by everything placed before it (earlier passes never move)."""
    require_bounds(shapes, bounds)
    return plan_passes_at_largest(*worst_case_lifetimes(arena, shapes, bounds), bounds)


def plan_passes_at_largest(worst: ArenaLifetimes, passes: Sequence[int], exprs: Sequence[Value],
                           bounds: Mapping[str, tuple[int, int]]) -> PassPlan:
    """plan_passes on records already at their largest sizes, each with its pass and size expression."""
    records, passes, exprs = worst.records, tuple(passes), tuple(exprs)
    order = sorted(range(len(records)), key=lambda i: (passes[i], -records[i].size, records[i].first_op, i))
    alignment = SEMANTICS[worst.semantics].alignment
    plan = offset_plan("passes", records, place_in_order(records, order, alignment), alignment)
    check_offset_plan(records, plan, worst.aliases, worst.alias_intervals)
    return PassPlan(worst, plan, passes, exprs, dict(bounds), offset_lower_bound(records))


def sizes_at(pass_plan: PassPlan, binding: Mapping[str, int]) -> tuple[UsageRecord, ...]:
    """The records at one binding of the symbols (for checking a worst-case plan there)."""
    sem = SEMANTICS[pass_plan.lifetimes.semantics]
    try:
        return tuple(replace(r, size=align_up(evaluate(e, binding), sem.size_rounding))
                     for r, e in zip(pass_plan.lifetimes.records, pass_plan.size_expressions))
    except UnboundSymbol as e:
        raise DimError(f"symbol '{e.args[0]}' has no value in this binding") from None
