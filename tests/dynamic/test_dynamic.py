"""Dynamic shapes: size expressions match the real interpreter, and the worst-case plan holds at
every binding inside the bounds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from fixtures.catalog import CATALOG
from packager.dynamic.shapes import (DimError, analyse, bounds_of, parse_dim, plan_passes, require_bounds,
                              sizes_at)
from packager.lifetimes import model_lifetimes
from packager.reader import parse_model
from packager.dynamic.symbolic import evaluate
from packager.plan.validate import check_offset_plan

litert = pytest.importorskip("ai_edge_litert.interpreter",
                             reason="TFLite runtime not installed (pip install '.[runtimes]')")

# model -> (--dim specs giving the bounds, bindings to run: input name -> shape)
CASES = {
    "dynamic_batch": (["image_0=1..8"], [{"image": [1, 8, 8, 3]}, {"image": [3, 8, 8, 3]},
                                         {"image": [8, 8, 8, 3]}]),
    "dynamic_sequence": (["tokens_1=1..64"], [{"tokens": [1, 1, 16]}, {"tokens": [1, 7, 16]},
                                              {"tokens": [1, 64, 16]}]),
    "dynamic_image": (["image_1=8..64", "image_2=8..64"],
                      [{"image": [1, 8, 8, 3]}, {"image": [1, 13, 31, 3]}, {"image": [1, 64, 64, 3]}]),
    "where_op": ([], [{"x": [16]}, {"x": [16]}, {"x": [16]}]),
}


def _run(data: bytes, shapes: dict[str, list[int]], seed: int) -> dict[int, tuple[int, tuple]]:
    """tensor -> (bytes, shape) after a real invoke at the given input shapes."""
    it = litert.Interpreter(model_content=data, experimental_op_resolver_type=
                            litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    details = {d["name"]: d for d in it.get_input_details()}
    for name, shape in shapes.items():
        it.resize_tensor_input(details[name]["index"], shape)
    it.allocate_tensors()
    rng = np.random.default_rng(seed)
    for d in it.get_input_details():
        it.set_tensor(d["index"], (rng.random(d["shape"]) * 2 - 1).astype(d["dtype"]))
    it.invoke()
    out = {}
    for d in it.get_tensor_details():
        a = it.tensor(d["index"])()
        out[d["index"]] = (a.nbytes, tuple(a.shape))
    return out


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("semantics", ["tflite", "tflm", "ideal"])
def test_worst_case_plan_holds_at_real_sizes(name, semantics):
    specs, runs = CASES[name]
    data = CATALOG[name]()
    model = parse_model(data)
    shapes = analyse(model)
    assert shapes.is_dynamic
    bounds = bounds_of(shapes, [parse_dim(s) for s in specs])
    arena = model_lifetimes(model, semantics, plan_dynamic=True)[0]
    pp = plan_passes(arena, shapes, bounds)
    check_offset_plan(pp.lifetimes.records, pp.plan, arena.aliases, arena.alias_intervals)
    assert pp.plan.arena >= pp.lower_bound
    data_symbols = [s for s in shapes.symbols if s.data_dependent]
    for seed, run_shapes in enumerate(runs):
        real = _run(data, run_shapes, seed)
        binding = {}
        for s in shapes.symbols:
            if not s.data_dependent:
                tensor, axis = _input_axis(model, s.source)
                binding[s.name] = real[tensor][1][axis]
        for s in data_symbols:  # known only after the op ran: read it off the real output
            op_index = int(s.source.split("of op ")[1].split()[0])
            out_tensor = model.main.operators[op_index].outputs[int(s.source.split()[1])]
            binding[s.name] = real[out_tensor][1][int(s.source.split("axis ")[1].split()[0])]
        at_binding = sizes_at(pp, binding)
        for rec, worst, expr in zip(at_binding, pp.lifetimes.records, pp.size_expressions):
            real_bytes = real[rec.tensor][0]
            assert real_bytes <= worst.size, (rec.tensor, real_bytes, worst.size)
            assert evaluate(expr, binding) == real_bytes, (model.main.tensors[rec.tensor].name, str(expr))
        # The worst-case offsets stay valid with the real sizes.
        check_offset_plan(at_binding, replace(pp.plan, arena=pp.plan.arena), arena.aliases, arena.alias_intervals)


def _input_axis(model, source: str) -> tuple[int, int]:
    name = source.split("'")[1]
    axis = int(source.rsplit(" ", 1)[1])
    tensor = next(t for t in model.main.inputs if model.main.tensors[t].name == name)
    return tensor, axis


def test_passes_order_input_and_data_dependent_tensors():
    model = parse_model(CATALOG["where_op"]())
    shapes = analyse(model)
    by_name = {model.main.tensors[t].name: p for t, p in shapes.passes.items()}
    assert by_name["x"] == 0 and by_name["mask"] == 0
    assert by_name["positions"] == 2 and by_name["picked"] == 2
    (sym,) = shapes.symbols
    assert sym.data_dependent and bounds_of(shapes, [])[sym.name] == (0, 16)  # WHERE: input elements


def test_unbound_symbol_is_named():
    model = parse_model(CATALOG["dynamic_batch"]())
    shapes = analyse(model)
    with pytest.raises(DimError, match="'image_0'.*--dim image_0=MIN..MAX"):
        require_bounds(shapes, bounds_of(shapes, []))


def test_rename_and_bad_dims():
    model = parse_model(CATALOG["dynamic_batch"]())
    spec = parse_dim("image_0:batch=2..6")
    shapes = analyse(model, renames={spec.name: spec.rename})
    assert [s.name for s in shapes.symbols] == ["batch"]
    assert bounds_of(shapes, [spec]) == {"batch": (2, 6)}
    for bad in ("=3", "batch=9..2", "batch=0", "batch=a..b"):
        with pytest.raises(DimError):
            parse_dim(bad)
    with pytest.raises(DimError, match="no such symbol"):
        bounds_of(shapes, [parse_dim("nope=3")])


def test_static_models_have_no_symbols():
    model = parse_model(CATALOG["chain"]())
    shapes = analyse(model)
    assert not shapes.is_dynamic and set(shapes.passes.values()) == {0}
