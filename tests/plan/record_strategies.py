"""Usage records for the strategy tests: built from (first, last, size) triples, or drawn by
hypothesis over a few operators so that many records conflict."""

from __future__ import annotations

from hypothesis import strategies as st

from packager.plan.records import UsageRecord


def records_of(triples) -> list[UsageRecord]:
    return [UsageRecord(i, first, last, size) for i, (first, last, size) in enumerate(triples)]


@st.composite
def usage_records(draw, sizes=st.integers(0, 5000), max_records=40):
    """Records over a few operators, so that many conflict; sizes include 0."""
    n_ops = draw(st.integers(1, 25))
    triples = []
    for _ in range(draw(st.integers(0, max_records))):
        first = draw(st.integers(0, n_ops - 1))
        last = draw(st.integers(first, min(n_ops - 1, first + draw(st.integers(0, 10)))))
        triples.append((first, last, draw(sizes)))
    return records_of(triples)


# Few distinct sizes, so that ties in every order are everywhere.
tied_records = usage_records(sizes=st.sampled_from([0, 8, 16, 24, 100, 100, 64]))
