"""Child process for the TFLite Micro proof tests: run models in the tflite-micro interpreter on
seeded random inputs and print, as one JSON line, what each run allocated and a digest of each
output.

    python tests/package/tflm_child.py JOB.json

JOB: {"seed": int, "inputs": n, "outputs": n, "runs": [{"path": str, "arena": int}, ...]}.
A separate process because TFLite Micro can crash (not just refuse) when an arena is a little too
small, and because print_allocations() writes to the C-level stderr (file descriptor 2).
Imports nothing from the packager.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile


def _captured(fn):
    """Run fn with file descriptor 2 redirected to a file; return (result or exception, text)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            result = fn()
        except Exception as e:  # the runtime refusing the model or the arena, in its own words
            result = e
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        return result, sink.read().decode("utf-8", "replace")


def _inputs(interpreter, count: int, seed: int) -> list:
    import numpy as np

    rng = np.random.default_rng(seed)
    values = []
    for i in range(count):
        d = interpreter.get_input_details(i)
        shape, dtype = tuple(int(n) for n in d["shape"]), np.dtype(d["dtype"])
        if dtype == np.bool_:
            values.append(rng.integers(0, 2, shape).astype(bool))
        elif np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            values.append(rng.integers(max(info.min, -100), min(info.max, 100), shape).astype(dtype))
        else:
            values.append(rng.uniform(-1.0, 1.0, shape).astype(dtype))
    return values


def run(path: str, arena: int, n_inputs: int, n_outputs: int, seed: int) -> dict:
    from tflite_micro import runtime

    with open(path, "rb") as f:
        data = f.read()
    made, text = _captured(lambda: runtime.Interpreter.from_bytes(
        data, arena_size=arena, intrepreter_config=runtime.InterpreterConfig.kAllocationRecording))
    if isinstance(made, Exception):
        return {"loaded": False, "reason": " ".join(str(made).split())[:200]}
    interpreter = made
    for i, value in enumerate(_inputs(interpreter, n_inputs, seed)):
        interpreter.set_input(value, i)
    interpreter.invoke()
    digests = [hashlib.sha256(interpreter.get_output(i).tobytes()).hexdigest()
               for i in range(n_outputs)]
    _, text = _captured(interpreter.print_allocations)
    sizes = {k: int(v) for k, v in re.findall(r"Arena allocation (\w+) (\d+) bytes", text)}
    return {"loaded": True, "head": sizes.get("head"), "tail": sizes.get("tail"),
            "total": sizes.get("total"), "outputs": digests}


def main(job_path: str) -> None:
    with open(job_path) as f:
        job = json.load(f)
    results = [run(r["path"], r["arena"], job["inputs"], job["outputs"], job["seed"])
               for r in job["runs"]]
    sys.stdout.write(json.dumps(results) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
