"""control_flow.py: a control-flow op's child arenas are alternatives over the caller's arena
where the semantics allows it, and the bound stays a bound."""

from __future__ import annotations

from packager.lifetimes import ArenaLifetimes
from packager.control_flow import live_bytes, model_total
from packager.plan.records import UsageRecord


def arena(subgraph: int, records, calls=None) -> ArenaLifetimes:
    return ArenaLifetimes(subgraph=subgraph, semantics="ideal", num_steps=3,
                          records=tuple(UsageRecord(*r) for r in records), whole_run=frozenset(),
                          aliases={}, alias_intervals={}, category={}, persistent_bytes=0,
                          calls=calls or {})


def test_branches_count_once_over_the_caller():
    main = arena(0, [(0, 0, 1, 100), (1, 1, 2, 50)], calls={1: (1, 2)})
    then_, else_ = arena(1, [(0, 0, 0, 300)]), arena(2, [(0, 0, 0, 40)])
    best = {0: 150, 1: 300, 2: 40}
    bound = {0: 150, 1: 300, 2: 40}
    total = model_total([main, then_, else_], best, bound, alternate=True)
    assert total.best == 150 + 300  # not 150 + 300 + 40
    assert total.bound == live_bytes(main, 1) + 300 == 450 <= total.best
    assert model_total([main, then_, else_], best, bound, alternate=False).best == 490


def test_nested_and_recursive_calls():
    outer = arena(0, [(0, 0, 0, 10)], calls={0: (1,)})
    inner = arena(1, [(0, 0, 0, 20)], calls={0: (2,)})
    leaf = arena(2, [(0, 0, 0, 30)])
    sizes = {0: 10, 1: 20, 2: 30}
    assert model_total([outer, inner, leaf], sizes, sizes, True).best == 60
    loop = arena(2, [(0, 0, 0, 30)], calls={0: (1,)})  # 1 -> 2 -> 1: counted as a plain sum
    assert model_total([outer, inner, loop], sizes, sizes, True).best == 60
