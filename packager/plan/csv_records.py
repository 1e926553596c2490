"""Usage records from MiniMalloc's CSV format: header `id,lower,upper,size`, half-open [lower, upper).

Lets the planners run on peers' benchmark instances. A record over [lower, upper) becomes
first_op=lower, last_op=upper-1 (our intervals are inclusive).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from packager.errors import PlanError, RecordsError
from packager.plan.records import Records

MAX_CSV_RECORDS = 10_000_000


def read_records_csv(path: str | Path) -> Records:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise RecordsError(f"{p}: cannot read records ({getattr(e, 'strerror', None) or e})") from None
    return parse_records_csv(text, source=p.name)


def parse_records_csv(text: str, source: str = "records") -> Records:
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    if header is None:
        raise RecordsError(f"{source}: empty file, expected the header id,lower,upper,size")
    names = [h.strip().lower() for h in header]
    missing = [c for c in ("id", "lower", "upper", "size") if c not in names]
    if missing:
        raise RecordsError(f"{source}: header lacks {', '.join(missing)} (expected id,lower,upper,size)")
    col = {c: names.index(c) for c in ("id", "lower", "upper", "size")}
    records: list[tuple[int, int, int, int]] = []  # (id, first, last, size)
    seen: set[int] = set()
    for line_no, row in enumerate(rows, start=2):
        if not row or all(not c.strip() for c in row):
            continue
        try:
            rid, lower, upper, size = (int(row[col[c]]) for c in ("id", "lower", "upper", "size"))
        except (ValueError, IndexError):
            raise RecordsError(f"{source}:{line_no}: expected four integers, got {row}") from None
        if lower < 0 or upper <= lower or size < 0:
            raise RecordsError(f"{source}:{line_no}: need 0 <= lower < upper and size >= 0, got {row}")
        if rid in seen:
            raise RecordsError(f"{source}:{line_no}: duplicate id {rid}")
        seen.add(rid)
        records.append((rid, lower, upper - 1, size))
        if len(records) > MAX_CSV_RECORDS:
            raise RecordsError(f"{source}: more than {MAX_CSV_RECORDS} records")
    if not records:
        raise RecordsError(f"{source}: no records")
    try:
        return Records(*zip(*records))
    except PlanError as e:  # a number too large to plan with
        raise RecordsError(f"{source}: {e}") from None
