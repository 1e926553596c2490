"""The one-line notes `package` prints about a model: what a runtime will refuse, what TFLite Micro
plans by itself, and what the plan leaves out."""

from __future__ import annotations

from packager.model import Model
from packager.package.sidecar import SCRATCH, PackagePlan
from packager.semantics import SEMANTICS


def model_notes(plan: PackagePlan, model: Model, unmodelled_ops: tuple[str, ...] = ()) -> list[str]:
    notes = []
    unmodelled_ops_known = {op.name for sg in model.subgraphs for op in sg.operators
                            if op.opcode.is_custom and op.name not in unmodelled_ops}
    custom = sorted({op.name for sg in model.subgraphs for op in sg.operators if op.opcode.is_custom})
    if custom:
        modelled = all(op in unmodelled_ops_known for op in custom)
        scratch_note = ("" if not SEMANTICS[plan.semantics].kernel_scratch_in_arena else
                        "; their memory is modelled (the TFLite Micro figures hold once registered)"
                        if modelled else "; scratch buffers its kernel may request are not in the plan")
        notes.append(f"custom op {', '.join(custom)}: TFLite Micro will refuse the model unless you "
                     f"register it (MicroMutableOpResolver::AddCustom); the plan itself is valid"
                     f"{scratch_note}")
    unmodelled_ops = tuple(op for op in unmodelled_ops if op not in custom)
    scratch = [t for a in plan.arenas
               for t in a.offsets.tensors.entries([k for k, kind in enumerate(a.offsets.tensors.kind) if kind == SCRATCH])]
    if scratch:
        notes.append(f"{len(scratch)} scratch buffer(s) of TFLite Micro kernels "
                     f"({sum(t.size for t in scratch):,} B) are placed by TFLite Micro at run time; "
                     "the plan leaves room for them where TFLite Micro will put them")
    if unmodelled_ops:
        notes.append(f"scratch requests of TFLite Micro's {', '.join(unmodelled_ops)} kernels are not "
                     "modelled: if they ask for scratch, TFLite Micro's head can exceed the plan")
    if SEMANTICS[plan.semantics].offline_plan and len(model.subgraphs) > 1:
        notes.append(f"{len(model.subgraphs)} subgraphs: the offline plan numbers tensors globally "
                     "(subgraphs concatenated), as TFLite Micro's docs and current builds do; "
                     "older builds read it with per-subgraph indices and would misplace the tensors "
                     "of subgraphs 1 and up")
    if SEMANTICS[plan.semantics].offline_plan and len(model.signature_defs) > 1:
        first = next((s.key for s in model.signature_defs if s.subgraph == 0), "")
        notes.append(f"{len(model.signature_defs)} signatures: TFLite Micro has no signature runner; it sets "
                     "every subgraph up in the one arena (the figures count them all) and Invoke runs subgraph 0"
                     f"{f' ({first!r})' if first else ''}; to run another signature on a device, convert it alone")
    dynamic = sum(1 for sg in model.subgraphs for t in sg.tensors if t.nbytes is None)
    if dynamic:
        notes.append(f"{dynamic} tensor(s) of variable size (strings, resources) are not planned")
    return notes
