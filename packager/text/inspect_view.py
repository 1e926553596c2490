"""What `inspect` shows: a plain-data summary of a model and its usage records under a semantics."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from packager.dynamic.shapes import analyse, bounds_of, parse_dim, renames_of
from packager.dynamic.stored_batch import stored_batch
from packager.lifetimes import ALIAS, CONSTANT, DYNAMIC, PERSISTENT, PLANNED, UNUSED, model_lifetimes
from packager.model import Model
from packager.plan.records import offset_lower_bound

CATEGORIES = (PLANNED, CONSTANT, PERSISTENT, ALIAS, DYNAMIC, UNUSED)


def model_summary(model: Model, semantics: str, source: str | Path | None = None,
                  dims: tuple[str, ...] = ()) -> dict:
    specs = [parse_dim(d) for d in dims]
    shapes = analyse(model, 0, renames_of(specs))
    bounds = bounds_of(shapes, specs)
    batch = stored_batch(model, dims)  # without --dim, a batch -1 only in shape_signature: stored
    if batch is not None:
        bounds = dict(batch.bounds)
    arenas = model_lifetimes(model, semantics, plan_dynamic=shapes.is_dynamic)
    subgraphs = []
    for sg in model.subgraphs:
        subgraphs.append({
            "index": sg.index,
            "name": sg.name,
            "tensors": len(sg.tensors),
            "operators": len(sg.operators),
            "inputs": list(sg.inputs),
            "outputs": list(sg.outputs),
            "ops_by_type": dict(sorted(Counter(op.name for op in sg.operators).items())),
            "calls": {str(op.index): list(op.subgraphs) for op in sg.operators if op.subgraphs},
        })
    def dynamic_view(a, tensor_id: int) -> dict:
        s_index, t = a.tensor_subgraph.get(tensor_id, (a.subgraph, tensor_id))
        if s_index != shapes.subgraph or t not in shapes.sizes:
            return {"size_expr": None, "pass": 0}
        return {"size_expr": str(shapes.sizes[t]), "pass": shapes.passes[t]}

    arena_views = []
    for a in arenas:
        def describe(tensor_id: int) -> dict:
            s, t = a.tensor_subgraph.get(tensor_id, (a.subgraph, tensor_id))
            tensor = model.subgraphs[s].tensors[t]
            return {"subgraph": s, "index": t, "name": tensor.name, "type": tensor.type,
                    "shape": list(tensor.shape)}

        counts = Counter(a.category.values())
        arena_views.append({
            "subgraph": a.subgraph,
            "inline": a.inline,
            "steps": a.num_steps,
            "counts": {c: counts.get(c, 0) for c in CATEGORIES},
            "persistent_bytes": a.persistent_bytes,
            "lower_bound": offset_lower_bound(a.records),
            "records": [{**describe(r.tensor), "id": r.tensor, "first_op": r.first_op,
                         "last_op": r.last_op, "size": r.size, **dynamic_view(a, r.tensor)}
                        for r in a.records],
            "aliases": [{**describe(t), "id": t, "alias_of": root}
                        for t, root in sorted(a.aliases.items())],
        })
    return {
        "model": Path(source).name if source else None,
        "schema_version": model.version,
        "description": model.description,
        "semantics": semantics,
        "subgraphs": subgraphs,
        "metadata": [name for name, _ in model.metadata],
        "signatures": [s.key for s in model.signature_defs],
        "arenas": arena_views,
        "symbols": [{"name": s.name, "source": s.source, "data_dependent": s.data_dependent,
                     "pass": s.pass_index, "bound": list(bounds[s.name]) if s.name in bounds else None,
                     "derived_bound": None if s.derived_bound is None else str(s.derived_bound),
                     "fixed_by": s.pinned_by or None,
                     "stored_unknown": s.stored_unknown or None,
                     "give": _dim_form(s)}
                    for s in shapes.symbols],
        **({"stored_shape": batch.view(semantics)} if batch is not None else {}),
    }


def _dim_form(symbol) -> str:
    """The --dim a symbol takes, as the other commands name it: the one size a stored -1 runs
    at (nothing else gives it one), else a range."""
    return f"--dim {symbol.name}=N" if symbol.stored_unknown else f"--dim {symbol.name}=MIN..MAX"
