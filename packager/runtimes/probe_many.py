"""Child-process entry point for many models in one process: the runtime is loaded once, which is
most of a one-model probe's time (the coverage matrix measures hundreds of tiny models).

    python -m packager.runtimes.probe_many tflite [ai-edge-litert|tflite-runtime|-] < JOBS

JOBS: one line per model, `PATH<TAB>S.I,S.I...[<TAB>S,S...]`: the 0-d tensors to locate (as
probe.py's) and the subgraphs to allocate afterwards as their signature runners would.
Prints one JSON line per model, in order, as soon as it is measured: {"path", "outcome"
("measured" | "refused"), ...} with the fields of probe.py's answer (`subgraphs`, `located`,
`after_invoke`, or `reason`). A model that crashes the runtime ends the process: the parent
(runtimes/batch.py) sees which line is missing and goes on in a new child from the next one.
"""

from __future__ import annotations

import json
import sys

from packager.runtimes.probe import (EXIT_MISSING, _file_subgraphs, _locate_copies, _tensor_row,
                                     _tflite_module, after_invoke, allocated, emit,
                                     signature_runners)


def measure_one(interpreter, path: str, locate: set[tuple[int, int]],
                signatures: tuple[int, ...] = ()) -> dict:
    """What probe.py's probe_tflite prints for one model, as a dict; and, last, for each
    subgraph in `signatures` (other signatures' entry points), its tensors once allocated as
    its signature runner allocates it before running (AllocateTensors of that subgraph)."""
    wrapper, refused = allocated(interpreter, path)
    if refused:
        return {"outcome": "refused", "reason": refused}
    count = wrapper.NumSubgraphs() if hasattr(wrapper, "NumSubgraphs") else _file_subgraphs(path)
    subgraphs = [[_tensor_row(wrapper, i, s) for i in range(wrapper.NumTensors(s))]
                 for s in range(count)]
    located = _locate_copies(wrapper, subgraphs, locate)
    after = after_invoke(wrapper, count, locate)
    return {"outcome": "measured", "subgraphs": subgraphs, "located": located,
            "after_invoke": after, "signature_runners": signature_runners(wrapper, signatures)}


def main(argv: list[str]) -> None:
    if len(argv) != 2 or argv[0] != "tflite":
        sys.stderr.write(__doc__)
        sys.exit(2)
    wanted = None if argv[1] == "-" else argv[1]
    interpreter, package, version = _tflite_module(wanted)
    if interpreter is None:
        emit({"missing": wanted or "ai-edge-litert (or tflite-runtime)"}, EXIT_MISSING)
    for line in sys.stdin:
        path, _, rest = line.rstrip("\n").partition("\t")
        if not path:
            continue
        pairs, _, runners = rest.partition("\t")
        locate = {tuple(int(x) for x in pair.split(".")) for pair in pairs.split(",") if pair}
        data = measure_one(interpreter, path, locate,
                           tuple(int(s) for s in runners.split(",") if s))
        data.update(path=path, runtime=package, version=version)
        sys.stdout.write(json.dumps(data) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
