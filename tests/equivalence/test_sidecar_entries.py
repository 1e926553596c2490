"""The sidecar plan's tensor entries, made a column at a time (package/assemble.py), are the
entries one would state one per record and alias; the columns and the entries they give agree."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from packager.arenas import alias_bytes, bindings_for, plan_arenas
from packager.lifetimes import GlobalIds
from packager.package.assemble import package_plan
from packager.package.columns import ENTRY_FIELDS, TensorColumns
from packager.package.sidecar import SCRATCH, TENSOR, SourceModel, TensorEntry
from packager.reader import read_model
from tests.package.support import model_file


def test_entries_and_columns_hold_the_same_values():
    rows = [(1, 0, 2, "tensor", "a", "INT8", (1, 4), 0, 16, 0, 1, None, 0, None),
            (2 ** 30, 1, -1, "scratch", "conv", "UINT8", (64,), 16, 64, 1, 2, 1, 1, "4*N"),
            (3, 0, 5, "tensor", "", "FLOAT32", (), 2 ** 40, 0, 2, 2, None, 0, "")]
    entries = [TensorEntry(*row) for row in rows]
    columns = TensorColumns.of_entries(entries)
    assert list(columns) == entries and columns[1] == entries[1] and columns[-1] == entries[-1]
    assert [dataclasses.astuple(e) for e in columns] == rows
    assert columns.alias_of.tolist() == [-1, 1, -1] and columns.planned.tolist() == [True, False, True]
    assert columns == TensorColumns.of_entries(entries) != TensorColumns.of_entries(entries[:2])
    with pytest.raises(ValueError):  # columns are never written to
        columns.offset[0] = 32
    with pytest.raises(OverflowError):  # bounds checked when made
        TensorColumns.of_entries([dataclasses.replace(entries[0], offset=2 ** 63)])
    with pytest.raises(ValueError):
        TensorColumns(**{**{f: columns[f] for f in ENTRY_FIELDS}, "name": ("a",)})


# -- the sidecar plan's entries, made a column at a time (package/assemble.py) ---------------------

# scratch buffers (tflm), aliases (tflite), control flow inline and per subgraph, dynamic sizes
ENTRY_CASES = [("mobile_block", "tflm", ()), ("inplace_candidates", "tflite", ()), ("op_zoo", "tflite", ()),
               ("if_else", "tflm", ()), ("while_loop", "tflite", ()),
               ("dynamic_image", "tflm", ("image_1=8..32", "image_2=8..32")),
               ("dynamic_image", "tflite", ("image_1=8..32", "image_2=8..32"))]


def _entries_row_by_row(model, planned) -> list[TensorEntry]:
    """What the sidecar states for each record, then each alias, one entry at a time."""
    lifetimes, scratch, sizes = planned.arena.lifetimes, planned.arena.scratch, planned.arena.sizes
    problem = planned.result.problem

    def entry(g, first, last, size, offset, alias_of=None):
        more = (0, None) if sizes is None else (sizes.passes[g], str(sizes.expressions[g]))
        if g in scratch:
            return TensorEntry(g, lifetimes.subgraph, -1, SCRATCH, scratch[g], "UINT8", (size,), offset, size,
                               first, last, None, *more)
        s, t = lifetimes.tensor_subgraph.get(g, (lifetimes.subgraph, g))
        tensor = model.subgraphs[s].tensors[t]
        return TensorEntry(g, s, t, TENSOR, tensor.name, tensor.type, tensor.shape, offset, size,
                           first, last, alias_of, *more)

    out = [entry(r.tensor, r.first_op, r.last_op, r.size, o)
           for r, o in zip(problem.records, planned.offsets.plan.offsets)]
    by_id = {e.index: e for e in out}
    for alias, owner in sorted(problem.aliases.items()):
        o = by_id[owner]
        first, last = problem.alias_intervals.get(alias, (o.first_op, o.last_op))
        own = alias_bytes(model, lifetimes, alias) if sizes is None else sizes.largest[alias]
        out.append(entry(alias, first, last, min(own, o.size), o.offset, owner))
    return out


@pytest.mark.parametrize("name,semantics,dims", ENTRY_CASES)
def test_the_entries_made_by_columns_are_those_made_one_by_one(name, semantics, dims):
    model = read_model(model_file(name))
    bindings = bindings_for(model, dims)
    planned = plan_arenas(model, semantics, bindings, "greedy_by_size", to_ship=True)
    source = SourceModel(f"{name}.tflite", "0" * 64, len(model.raw), tuple(len(sg.tensors) for sg in model.subgraphs))
    plan = package_plan(model, semantics, source, planned, bindings)
    seen = set()
    for section, arena in zip(plan.arenas, planned):
        expected = _entries_row_by_row(model, arena)
        assert list(section.offsets.tensors) == expected
        assert section.offsets.tensors == TensorColumns.of_entries(expected)
        seen.update(e.kind if e.alias_of is None else "alias" for e in expected)
    assert {"mobile_block": SCRATCH, "inplace_candidates": "alias"}.get(name, TENSOR) in seen


@pytest.mark.parametrize("starts,total", [((0,), 5), ((0, 3, 3, 7), 9)])
def test_global_ids_as_columns_are_what_get_gives(starts, total):
    ids = GlobalIds(list(starts), total)
    wanted = list(range(total))[::-1]
    assert ids.columns(wanted) == ([ids[g][0] for g in wanted], [ids[g][1] for g in wanted])
    assert ids.columns([]) == ([], [])
    for stray in ([total], [-1], [True], [np.int64(1)]):  # not a global id: the caller asks get()
        assert ids.columns(wanted + stray) is None
