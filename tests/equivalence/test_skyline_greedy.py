"""The skyline tree search's greedy descent by index (skyline_greedy) against the plain one: the
skyline as one height per cell, every record of the lowest segment listed at every step."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.synthetic import SHAPES, usage_records
from packager.plan.offsets import best_fit_search
from packager.plan.offsets.skyline_greedy import RAISE, greedy_descent
from packager.plan.records import OffsetPlan, UsageRecord
from packager.plan.validate import check_offset_plan


def plain_greedy(search: best_fit_search.SkylineSearch) -> tuple[list[int], list[int]]:
    """The heuristic as the search states it: at the lowest segment (leftmost on ties) place the
    first of the records starting at its start (if any), else of the records inside it, ending
    at its end first, then by preference; raise the segment to its lower neighbour when none fits."""
    first, last, size, rank = search.first, search.last, search.size, search.rank
    n, cells, align = len(first), search.cells, search.alignment
    height, placed, offset, actions = [0] * cells, [False] * n, [0] * n, []
    while not all(placed):
        h = min(height)
        a = height.index(h)
        z = a
        while z + 1 < cells and height[z + 1] == h:
            z += 1
        inside = [k for k in range(n) if not placed[k] and a <= first[k] and last[k] <= z]
        snug = [k for k in inside if first[k] == a]
        cands = sorted(snug or inside, key=lambda k: (last[k] != z, rank[k]))
        if cands:
            k = cands[0]
            placed[k], offset[k] = True, -(-h // align) * align
            for c in range(first[k], last[k] + 1):
                height[c] = offset[k] + size[k]
        else:
            k = RAISE
            wall = min(height[c] for c in (a - 1, z + 1) if 0 <= c < cells)
            for c in range(a, z + 1):
                height[c] = wall
        actions.append(k)
    return offset, actions


def by_index(search: best_fit_search.SkylineSearch):
    offsets, actions, nodes = greedy_descent(search.first, search.last, search.size, search.by_preference,
                                             search.cells, search.alignment, 1 << 62, lambda: False)
    assert nodes == len(actions)
    return offsets, actions


records_st = st.lists(st.tuples(st.integers(0, 20), st.integers(0, 8), st.sampled_from([0, 16, 32, 48, 64, 7, 100])),
                      max_size=50).map(lambda rows: [UsageRecord(i, a, a + d, s)
                                                      for i, (a, d, s) in enumerate(rows)])


@settings(max_examples=300, deadline=None)
@given(records=records_st, alignment=st.sampled_from([1, 16, 64]))
def test_greedy_by_index_makes_the_plain_greedy_choices(records, alignment):
    search = best_fit_search.SkylineSearch(records, alignment)
    assert by_index(search) == plain_greedy(search)


def test_greedy_by_index_on_the_benchmark_shapes():
    # Long segments (the untouched right part of the timeline), records crossing a segment's end
    # (skipped a block at a time) and raises all occur here.
    for shape in sorted(SHAPES):
        records = usage_records(SHAPES[shape](400))
        search = best_fit_search.SkylineSearch(records, 1)
        offsets, actions = by_index(search)
        assert (offsets, actions) == plain_greedy(search)
        assert RAISE in actions or shape == "chain"
        plan = OffsetPlan("best_fit_search", tuple(search.offsets_for(offsets, len(records))),
                          max(o + s for o, s in zip(offsets, search.size)), 1)
        check_offset_plan(records, plan)


def test_greedy_by_index_stops_at_its_node_limit():
    records = usage_records(SHAPES["residual"](200))
    search = best_fit_search.SkylineSearch(records, 1)
    assert greedy_descent(search.first, search.last, search.size, search.by_preference,
                          search.cells, 1, 50, lambda: False) == (None, None, 50)
