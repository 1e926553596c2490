"""What `inspect` prints: a model's subgraphs, ops, arenas and symbols."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from packager.text.inspect_view import CATEGORIES
from packager.text.tables import print_table


def print_summary(out: Console, s: dict, show_records: bool) -> None:
    """A model's subgraphs, ops and arenas (inspect_view.model_summary), with every record on request."""
    out.print(f"[bold]{s['model']}[/bold]  schema v{s['schema_version']}"
              + (f"  \"{s['description']}\"" if s["description"] else ""))
    if s["metadata"] or s["signatures"]:
        out.print(f"metadata: {', '.join(s['metadata']) or '-'}   signatures: {', '.join(s['signatures']) or '-'}")
    for sg in s["subgraphs"]:
        ops = ", ".join(f"{name} x{n}" for name, n in sorted(sg["ops_by_type"].items(), key=lambda kv: (-kv[1], kv[0])))
        out.print(f"\nsubgraph {sg['index']} '{sg['name']}': {sg['operators']} ops, {sg['tensors']} tensors, "
                  f"inputs {sg['inputs']}, outputs {sg['outputs']}")
        out.print(f"  ops: {ops or '-'}")
        for op, children in sg["calls"].items():
            out.print(f"  op {op} runs subgraph(s) {children}")
    for a in s["arenas"]:
        where = "whole model (inline)" if a["inline"] else f"subgraph {a['subgraph']}"
        counts = ", ".join(f"{a['counts'][c]} {c}" for c in CATEGORIES)
        out.print(f"\n[bold]{s['semantics']}[/bold] arena of {where}: {counts}")
        out.print(f"  lower bound {a['lower_bound']:,} B (largest operator breadth)"
                  f"; persistent {a['persistent_bytes']:,} B kept apart")
        if a["aliases"]:
            out.print("  aliases: " + ", ".join(f"{x['index']}->{x['alias_of']}" for x in a["aliases"]))
        if show_records:
            table = Table("tensor", "name", "type", "shape", "first op", "last op", "bytes", "pass", "size expression")
            for r in a["records"]:
                table.add_row(str(r["id"]), r["name"][:40], r["type"], str(r["shape"]),
                              str(r["first_op"]), str(r["last_op"]), f"{r['size']:,}", str(r["pass"]),
                              r["size_expr"] if r["pass"] else "")
            print_table(out, table)
    if s["symbols"]:
        out.print("\nsymbols:")
        for sym in s["symbols"]:
            bound = f"[{sym['bound'][0]}, {sym['bound'][1]}]" if sym["bound"] else _unbound(sym)
            fixed = f" (fixed by the graph: {sym['fixed_by']})" if sym.get("fixed_by") else ""
            out.print(f"  {sym['name']}: {sym['source']}, pass {sym['pass']}, {bound}{fixed}", markup=False)
    if "stored_shape" in s:
        out.print(f"note: {s['stored_shape']['note']}", markup=False, soft_wrap=True)
    if not show_records:
        out.print("\n(--records lists every usage record; --json gives everything)")


def _unbound(sym: dict) -> str:
    if sym.get("stored_unknown"):  # the file gives no size at all: the one it runs at is needed
        return f"unbound: the file stores {sym['stored_unknown']}; give {sym['give']} (the size it runs at)"
    return f"unbound (give {sym['give']})"
