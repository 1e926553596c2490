"""The planning problem of Pisarchyk & Lee 2020, taken from a .tflite model.

The paper plans the intermediate tensors of the TFLite GPU delegate: exact byte sizes, no
alignment, each tensor alive from the op that writes it to its last reader, no in-place sharing.
That is our "paper" semantics (packager/semantics.py). The delegate binds the graph's inputs and
outputs to objects the application owns, so by default they are left out of the plan too; pass
`graph_io=True` to keep them (they then live from op 0 to their last reader, and from their
producer to the end).
"""

from __future__ import annotations

from packager.lifetimes import model_lifetimes
from packager.model import Model
from packager.plan.problem import Problem

PAPER_SEMANTICS = "paper"
MIB = 1 << 20  # tables print MiB: the paper's "MB" for these byte counts


def paper_problems(model: Model, graph_io: bool = False) -> list[Problem]:
    """One problem per subgraph that has planned tensors."""
    problems = []
    for arena in model_lifetimes(model, PAPER_SEMANTICS):
        sg = model.subgraphs[arena.subgraph]
        external = set() if graph_io else {t for t in (*sg.inputs, *sg.outputs) if t >= 0}
        records = tuple(r for r in arena.records if r.tensor not in external)
        if records:
            problems.append(Problem(records=records, alignment=1))
    return problems
