"""One call into HiGHS: a 0-1 integer program, minimise cost . x subject to
row_lower <= A x <= row_upper, every x in {0, 1}.

Through highspy, HiGHS's own Python binding (a few milliseconds to import, where SciPy's
optimize package costs about 0.4 s of CPU and 30 MB before its first solve). The model HiGHS
receives is the one SciPy's `milp` hands it for the same input: the matrix column-wise with row
indices ascending in each column, the same options (no log, a node cap, an optional gap), so
HiGHS of the same version gives the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BinaryResult:
    x: np.ndarray | None  # None when HiGHS stopped without a feasible point
    optimal: bool  # solved to optimality (within `mip_rel_gap`)
    dual_bound: float | None  # no solution costs less
    message: str  # HiGHS's words for how it stopped


def solve(cost: np.ndarray, rows: np.ndarray, cols: np.ndarray, values: np.ndarray,
          row_lower: np.ndarray, row_upper: np.ndarray, *, node_limit: int,
          mip_rel_gap: float | None = None) -> BinaryResult:
    """The program whose matrix has `values` at (`rows`, `cols`) (a repeated entry adds up)."""
    import highspy  # on first use: most commands never solve an integer program

    n_cols, n_rows = len(cost), len(row_lower)
    start, index, value = _column_wise(np.asarray(rows, np.int64), np.asarray(cols, np.int64),
                                       np.asarray(values, np.float64), n_cols)
    lp = highspy.HighsLp()
    lp.num_col_ = n_cols
    lp.num_row_ = n_rows
    lp.a_matrix_.num_col_ = n_cols
    lp.a_matrix_.num_row_ = n_rows
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = start
    lp.a_matrix_.index_ = index
    lp.a_matrix_.value_ = value
    lp.col_cost_ = np.asarray(cost, np.float64)
    lp.col_lower_ = np.zeros(n_cols)
    lp.col_upper_ = np.ones(n_cols)
    lp.row_lower_ = np.asarray(row_lower, np.float64)
    lp.row_upper_ = np.asarray(row_upper, np.float64)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n_cols

    highs = highspy._Highs()  # the bare solver: no Python callbacks on its path
    highs.setOptionValue("log_to_console", False)
    highs.setOptionValue("mip_max_nodes", int(node_limit))
    if mip_rel_gap is not None:
        highs.setOptionValue("mip_rel_gap", float(mip_rel_gap))
    if highs.passModel(lp) == highspy.HighsStatus.kError:
        raise ValueError("HiGHS refused the integer program")  # a bug of ours, not of the input
    highs.run()
    status = highs.getModelStatus()
    info = highs.getInfo()
    message = highs.modelStatusToString(status)
    optimal = status == highspy.HighsModelStatus.kOptimal
    stopped_early = status in (highspy.HighsModelStatus.kTimeLimit,
                               highspy.HighsModelStatus.kIterationLimit,
                               highspy.HighsModelStatus.kSolutionLimit)
    feasible = optimal or (stopped_early and info.objective_function_value != highspy.kHighsInf)
    x = np.array(highs.getSolution().col_value) if feasible else None
    dual = info.mip_dual_bound if feasible else None
    return BinaryResult(x, optimal, dual, message)


def _column_wise(rows: np.ndarray, cols: np.ndarray, values: np.ndarray,
                 n_cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Column starts, row indices (ascending in each column) and values; repeated entries summed."""
    order = np.lexsort((rows, cols))
    rows, cols, values = rows[order], cols[order], values[order]
    if len(rows) > 1:
        new = np.ones(len(rows), bool)
        new[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
        if not new.all():
            firsts = np.flatnonzero(new)
            values = np.add.reduceat(values, firsts)
            rows, cols = rows[firsts], cols[firsts]
    start = np.zeros(n_cols + 1, np.int32)
    np.cumsum(np.bincount(cols, minlength=n_cols), out=start[1:])
    return start, rows.astype(np.int32), values
