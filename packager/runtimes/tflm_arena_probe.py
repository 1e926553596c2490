"""Child-process entry point: does TFLite Micro set a model up and run it in an arena of N bytes?

    python -m packager.runtimes.tflm_arena_probe MODEL N [N ...] [-- MODEL N [N ...] ...]

For each model in turn (the runtime is loaded once), tries each size in the order given (callers pass them largest first): builds the Python
interpreter (its default recording allocator) with `arena_size=N`, fills every input with the
same seeded pseudo-random values, invokes once and prints one JSON line per size: the head and
tail it recorded and a digest of every output, or the reason it failed, with the model's place
in the list. It stops a model's sizes at the first failure, since an interpreter that failed once
may be in no state to go on. TFLite Micro can crash
below its minimum instead of failing: the caller reads the lines printed before the crash.

Imports no planning code: only the runtime, numpy, the standard library and the output capture
of packager/runtimes/probe.py.
Exit codes: 0 done, 3 tflite-micro is not installed.
"""

from __future__ import annotations

import hashlib
import json
import sys

EXIT_MISSING = 3


def _say(data: dict) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


def _inputs(details: dict, seed: int):
    import numpy as np
    rng = np.random.default_rng(seed)
    dtype, shape = np.dtype(details["dtype"]), tuple(int(d) for d in details["shape"])
    if dtype.kind == "f":
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dtype)
    info = np.iinfo(dtype)
    low, high = max(info.min, -100), min(info.max, 100)
    return rng.integers(low, high + 1, size=shape, dtype=np.int64).astype(dtype)


def main(argv: list[str]) -> None:
    try:
        from tflite_micro import runtime
    except ImportError:
        _say({"missing": "tflite-micro"})
        sys.exit(EXIT_MISSING)
    from packager.runtimes.probe import package_version
    version = package_version("tflite-micro")
    jobs: list[list[str]] = [[]]
    for arg in argv:  # MODEL N [N ...], the models apart by "--"
        if arg == "--":
            jobs.append([])
        else:
            jobs[-1].append(arg)
    for model, (path, *sizes) in enumerate(jobs):
        _try_sizes(runtime, model, path, [int(s) for s in sizes], version)


def _try_sizes(runtime, model: int, path: str, sizes: list[int], version: str) -> None:
    """One model's sizes in order, up to the first failure."""
    from packager.runtimes.probe import captured_output, reason_of, recorded
    for size in sizes:
        with captured_output() as output:
            try:
                it = runtime.Interpreter.from_file(path, arena_size=size)
                count = 0
                while True:
                    try:
                        details = it.get_input_details(count)
                    except Exception:  # past the last input
                        break
                    it.set_input(_inputs(details, count), count)
                    count += 1
                it.invoke()
                digests, k = [], 0
                while True:
                    try:
                        out = it.get_output(k)
                    except Exception:  # past the last output
                        break
                    digests.append(hashlib.sha256(out.tobytes()).hexdigest()[:16])
                    k += 1
                error = None
            except Exception as e:  # the runtime refusing the size or the model
                error = e
        if error is not None:
            _say({"model": model, "arena": size, "ok": False, "reason": reason_of(error, output),
                  "version": version})
            return
        with captured_output() as recording:
            it.print_allocations()
        _say({"model": model, "arena": size, "ok": True, "head": recorded(recording, "head"),
              "tail": recorded(recording, "tail"), "outputs": digests, "version": version})
        del it


if __name__ == "__main__":
    main(sys.argv[1:])
