"""The block-at-a-time forms of the header's rows and the report's choices give what the plain
forms give: the same text, the same tensors drawn."""

import random

import pytest

from packager.emit.c_text import int_rows, int_rows_text
from packager.pictures import largest
from packager.plan.records import UsageRecord


@pytest.mark.parametrize("count", [0, 1, 11, 12, 13, 24, 100, 1007])
@pytest.mark.parametrize("per_row", [1, 5, 12])
def test_int_rows_text_is_the_rows_joined(count, per_row):
    rng = random.Random(count * 31 + per_row)
    values = [rng.choice([-1, 0, rng.randint(-2**31, 2**31 - 1)]) for _ in range(count)]
    assert int_rows_text(values, per_row) == "\n".join(int_rows(values, per_row))


def _largest_by_sorting(records, limit):
    if len(records) <= limit:
        return list(range(len(records)))
    by_area = sorted(range(len(records)),
                     key=lambda i: (-records[i].size * (records[i].last_op - records[i].first_op + 1), i))
    return sorted(by_area[:limit])


@pytest.mark.parametrize("seed", range(40))
def test_the_largest_tensors_are_those_of_the_sort_by_area(seed):
    rng = random.Random(seed)
    records = []
    for i in range(rng.randint(0, 80)):
        first = rng.randint(0, 12)
        records.append(UsageRecord(i, first, first + rng.randint(0, 6), rng.choice([0, 4, 16, rng.randint(0, 99)])))
    records = tuple(records)  # many equal areas: ties go by position
    limit = rng.randint(1, 50)
    assert largest(records, limit) == _largest_by_sorting(records, limit)


def test_areas_past_int64_are_sorted_exactly():
    records = tuple(UsageRecord(i, 0, 2**40 + i, 2**40 - i) for i in range(6))
    assert largest(records, 3) == _largest_by_sorting(records, 3)
