"""`plan MODEL --gpu`: what the TFLite GPU delegate's backends would allocate, beside our best plan."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from packager.plan.gpu_backends import GpuAnswer
from packager.text.tables import print_table


def gpu_view(answer: GpuAnswer) -> dict:
    return {"tensors": answer.tensors, "element_bytes": answer.element_bytes,
            "left_out_rank_above_4": list(answer.left_out), "note": answer.caveat,
            "backends": [{"backend": r.backend, "storage": r.storage, "policy": r.policy,
                          "delegate_bytes": r.delegate_bytes, "delegate_plan": r.delegate_plan,
                          "ours_bytes": r.ours_bytes, "ours_plan": r.ours_plan,
                          "saving_bytes": r.delegate_bytes - r.ours_bytes} for r in answer.rows]}


def print_gpu(out: Console, answer: GpuAnswer) -> None:
    out.print(f"TFLite GPU delegate: {answer.tensors} intermediate tensors of the main subgraph, "
              f"{answer.element_bytes}-byte elements (FP32; FP16 halves every figure)", markup=False,
              soft_wrap=True)
    table = Table()
    for name in ("backend", "storage", "delegate's policy", "delegate", "ours", "saving"):
        table.add_column(name)
    for r in answer.rows:
        saving = r.delegate_bytes - r.ours_bytes
        table.add_row(r.backend, r.storage, r.policy, f"{r.delegate_bytes:,} B\n{r.delegate_plan}",
                      f"{r.ours_bytes:,} B\n{r.ours_plan}",
                      f"{saving:,} B ({100 * saving / r.delegate_bytes:.1f}%)" if r.delegate_bytes else "-")
    print_table(out, table)
    if answer.left_out:
        out.print(f"left out (rank above 4, not a GPU tensor): tensors {list(answer.left_out)}", markup=False)
    out.print(f"note: {answer.caveat}.", markup=False, soft_wrap=True)
