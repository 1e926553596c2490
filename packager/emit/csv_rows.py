"""Rows of figures as CSV text: one header line of the given fields, None written as an empty cell."""

from __future__ import annotations

import csv
import io
from typing import Iterable, Sequence


def csv_rows_text(rows: Iterable[dict], fields: Sequence[str]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return out.getvalue()
