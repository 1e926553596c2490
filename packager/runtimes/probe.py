"""Child-process entry point: load a model in a real runtime and print what it allocated, as JSON.

    python -m packager.runtimes.probe tflite MODEL [ai-edge-litert|tflite-runtime|-] [S.I,S.I...] [S,S...]
    python -m packager.runtimes.probe tflm MODEL ARENA_BYTES

Runs in its own process so that a runtime that aborts or crashes cannot take the packager down.
Imports nothing from the packager: only the runtime and the standard library. The runtimes print
diagnostics on the C-level stdout/stderr; both file descriptors are redirected to a temporary file
while the runtime works, so the JSON line on stdout stays clean and the diagnostics can be quoted.

Exit codes: 0 measured (JSON on stdout), 3 runtime not installed, 4 the runtime refused the
model (JSON with a one-line reason). Anything else (a signal, a traceback) is a crash.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from contextlib import contextmanager
from typing import Iterator

EXIT_MISSING = 3
EXIT_REFUSED = 4


@contextmanager
def captured_output() -> Iterator[list[str]]:
    """Redirect file descriptors 1 and 2 to a temporary file; yield a list that receives the text."""
    lines: list[str] = []
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield lines
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            sink.seek(0)
            lines.extend(sink.read().decode("utf-8", "replace").splitlines())


def emit(data: dict, code: int = 0) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()
    sys.exit(code)


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    for cut in (" See instructions", " (TFLM failed", " Node number"):
        text = text.split(cut)[0]
    return text.strip()[:240]


def reason_of(error: BaseException, output: list[str]) -> str:
    """One line: the runtime's own diagnostic when it printed one, else the exception."""
    for line in output:
        if line.strip() and not line.startswith("[RecordingMicroAllocator]"):
            return _first_sentence(line)
    return _first_sentence(str(error)) or type(error).__name__


def package_version(name: str) -> str:
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:  # metadata missing or unreadable: the version is only informative
        return "?"


# -- TFLite / LiteRT ------------------------------------------------------------------------------

def _tflite_module(package: str | None = None):
    """The interpreter module: `package` when given, else ai-edge-litert, else tflite-runtime."""
    if package in (None, "ai-edge-litert"):
        try:
            from ai_edge_litert import interpreter
            import ai_edge_litert
            return interpreter, "ai-edge-litert", getattr(ai_edge_litert, "__version__", None) \
                or package_version("ai-edge-litert")
        except ImportError:
            if package is not None:
                return None, None, None
    try:
        from tflite_runtime import interpreter
        import tflite_runtime
        return interpreter, "tflite-runtime", getattr(tflite_runtime, "__version__", None) \
            or package_version("tflite-runtime")
    except ImportError:
        return None, None, None


def _tensor_row(wrapper, index: int, subgraph: int) -> list:
    """[index, data pointer or None, nbytes or the reason there is no buffer]."""
    try:
        # Temporaries a kernel reserved but never shaped have no type or dims: reading their
        # buffer would dereference null dims, so ask for type and shape first (they raise).
        dtype = wrapper.TensorType(index, subgraph)
        wrapper.TensorSize(index, subgraph)
        if getattr(dtype, "__name__", "") in ("object", "object_", "bytes_", "str_"):
            # Resource, variant and string tensors (string: numpy.bytes_): viewing them can
            # crash the interpreter.
            return [index, None, "no buffer view (resource, variant or string)"]
        array = wrapper.tensor(wrapper, index, subgraph)
    except (ValueError, RuntimeError) as e:
        return [index, None, str(e)]
    if array is None:
        return [index, None, "no buffer view"]
    if array.base is None:
        # 0-d tensors come back as copies: their address says nothing about the arena.
        return [index, None, "a copy, not a view (0-d tensor)"]
    return [index, array.__array_interface__["data"][0], int(array.nbytes)]


def _writable_regions() -> list[tuple[int, int]]:
    """(start, end) of the process's anonymous writable memory (the heap and malloc's mappings),
    where every arena lives; empty where /proc/self/maps cannot be read (not Linux)."""
    try:
        with open("/proc/self/maps") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) < 5 or not parts[1].startswith("rw"):
            continue
        if len(parts) > 5 and parts[5] != "[heap]":
            continue  # files, stacks, vdso: no arena there
        start, end = (int(x, 16) for x in parts[0].split("-"))
        out.append((start, end))
    return out


def _patterns(k: int, n: int, boolean: bool) -> tuple[bytes, bytes]:
    """Two byte patterns for hidden tensor k that differ in every byte (bools can hold only 1/0)."""
    if boolean:
        return b"\x01" * n, b"\x00" * n
    first = bytes(((k * 37 + j * 11 + 0x5B) & 0xFF) for j in range(n))
    return first, bytes(b ^ 0xFF for b in first)


def locate_hidden(wrapper, hidden: list[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """Where the 0-d tensors Python hands out as copies really are: write two patterns into each
    (SetTensor) in turn and find the one address of the process's writable memory that follows
    them (read through /proc/self/mem, which answers an unmapped address with an error, not a
    crash); every value is put back afterwards. Bools, which hold only 0 or 1, each get a round of
    their own; a tensor found at no address or at several stays hidden."""
    import numpy as np

    regions = _writable_regions()
    if not regions or not hidden:
        return {}
    saved, dtypes = {}, {}
    for s, i in hidden:
        try:
            value = np.asarray(wrapper.GetTensor(i, s))
        except (ValueError, RuntimeError):
            continue
        if value.shape != () or value.dtype == object:
            continue
        saved[(s, i)], dtypes[(s, i)] = value.copy(), value.dtype
    wide = [key for key in saved if dtypes[key] != np.bool_]
    rounds = ([wide] if wide else []) + [[key] for key in saved if dtypes[key] == np.bool_]
    found: dict[tuple[int, int], int] = {}
    try:
        mem = os.open("/proc/self/mem", os.O_RDONLY)
    except OSError:
        return {}
    try:
        while rounds:
            keys = rounds.pop(0)
            located, sharing = _one_round(wrapper, keys, dtypes, regions, mem)
            found.update(located)
            if sharing:  # one buffer, several tensors: those apart, one at a time
                rest = [key for key in keys if key not in sharing]
                rounds += ([rest] if rest else []) + [[key] for key in sharing]
    finally:
        os.close(mem)
        for (s, i), value in saved.items():
            try:
                wrapper.SetTensor(i, value, s)
            except (ValueError, RuntimeError):
                pass
    return found


def _one_round(wrapper, keys, dtypes, regions, mem):
    """({tensor: address} found, the tensors that share a buffer with another of `keys`)."""
    import numpy as np

    pats = {key: _patterns(k, np.dtype(dtypes[key]).itemsize, dtypes[key] == np.bool_)
            for k, key in enumerate(keys)}

    # Writable arrays made once: SetTensor copies them straight in, with no temporary copy of
    # its own that would follow the patterns too.
    values = {key: tuple(np.frombuffer(bytearray(p), dtypes[key]).reshape(()) for p in pair)
              for key, pair in pats.items()}

    def write(which: int) -> bool:
        try:
            for (s, i), pair in values.items():
                wrapper.SetTensor(i, pair[which], s)
        except (ValueError, RuntimeError):
            return False
        return True

    if not write(0):
        return {}, []
    # A tensor that does not read back its own pattern shares its buffer with a later one (a
    # control-flow child's input on its caller's buffer): the caller tries them one at a time.
    sharing = [key for key in keys if len(keys) > 1 and
               np.asarray(wrapper.GetTensor(key[1], key[0])).tobytes() != pats[key][0]]
    if sharing:
        return {}, sharing
    hits: dict[tuple[int, int], list[int]] = {key: [] for key in keys}
    for start, end in regions:
        snaps = []
        for which in (0, 1, 0, 1):
            if not write(which):
                return {}, []
            try:
                snaps.append(np.frombuffer(os.pread(mem, end - start, start), np.uint8))
            except OSError:
                break
        if len(snaps) < 4 or any(len(x) != end - start for x in snaps):
            continue
        a, b, c, d = snaps
        changed = np.flatnonzero((a != b) & (a == c) & (b == d))
        for key, (p1, p2) in pats.items():
            first = changed[(a[changed] == p1[0]) & (b[changed] == p2[0])]
            n = len(p1)
            for pos in first[:1000]:
                if bytes(a[pos:pos + n]) == p1 and bytes(b[pos:pos + n]) == p2:
                    hits[key].append(start + int(pos))
    return {key: at[0] for key, at in hits.items() if len(at) == 1}, []


def _file_subgraphs(path: str) -> int:
    """The length of Model.subgraphs (field 2 of the root table), read from the flatbuffer: the
    wrapper of tflite-runtime 2.14 has no NumSubgraphs, and asking past the last one crashes it."""
    import struct

    with open(path, "rb") as f:
        data = f.read()
    root = struct.unpack_from("<I", data, 0)[0]
    vtable = root - struct.unpack_from("<i", data, root)[0]
    vtable_bytes = struct.unpack_from("<H", data, vtable)[0]
    field = 4 + 2 * 2
    if field + 2 > vtable_bytes:
        return 0
    slot = struct.unpack_from("<H", data, vtable + field)[0]
    if slot == 0:
        return 0
    vector = root + slot + struct.unpack_from("<I", data, root + slot)[0]
    return struct.unpack_from("<I", data, vector)[0]


def allocated(interpreter, path: str):
    """(the interpreter's wrapper after allocate_tensors(), "") or (None, why the runtime refused
    the model): the wrapper, because the tensor views need its per-subgraph accessors."""
    with captured_output() as output:
        try:
            it = interpreter.Interpreter(
                model_path=path,
                experimental_op_resolver_type=interpreter.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
            it.allocate_tensors()
            error = None
        except Exception as e:  # the runtime refusing the model, in whatever words
            error = e
    # (what the runtime printed is in `output` only once the capture has ended)
    return (None, reason_of(error, output)) if error is not None else (it._interpreter, "")


def signature_runners(wrapper, signatures: tuple[int, ...]) -> dict:
    """For each subgraph in `signatures` (other signatures' entry points), its tensors once
    allocated as its signature runner allocates it before running (AllocateTensors of that
    subgraph), or why that failed; measured last, after subgraph 0's Invoke."""
    runners = {}
    for s in signatures:
        with captured_output() as output:
            try:
                wrapper.AllocateTensors(s)
                error = None
            except Exception as e:  # the runtime refusing, in whatever words
                error = e
        runners[str(s)] = ({"error": reason_of(error, output)} if error is not None else
                           {"rows": [_tensor_row(wrapper, i, s) for i in range(wrapper.NumTensors(s))]})
    return runners


def probe_tflite(path: str, wanted: str | None = None,
                 locate: tuple[tuple[int, int], ...] = (), signatures: tuple[int, ...] = ()) -> None:
    """`locate`: (subgraph, tensor) of the 0-d tensors to find by writing into them; the caller
    names them (never a constant: those live in the read-only model file). `signatures`: the
    subgraphs to allocate last as their signature runners would (signature_runners)."""
    interpreter, package, version = _tflite_module(wanted)
    if interpreter is None:
        emit({"missing": wanted or "ai-edge-litert (or tflite-runtime)"}, EXIT_MISSING)
    wrapper, refused = allocated(interpreter, path)
    if refused:
        emit({"runtime": package, "version": version, "reason": refused}, EXIT_REFUSED)
    count = wrapper.NumSubgraphs() if hasattr(wrapper, "NumSubgraphs") else _file_subgraphs(path)
    subgraphs = [[_tensor_row(wrapper, i, s) for i in range(wrapper.NumTensors(s))]
                 for s in range(count)]
    located = _locate_copies(wrapper, subgraphs, set(locate))
    after = after_invoke(wrapper, count, set(locate))
    data = {"runtime": package, "version": version, "subgraphs": subgraphs, "located": located,
            "after_invoke": after}
    if signatures:
        data["signature_runners"] = signature_runners(wrapper, signatures)
    emit(data)


INVOKE_LIMIT = 60.0  # seconds one Invoke may take before its measurement is given up


def after_invoke(wrapper, count: int, wanted: set[tuple[int, int]]) -> dict:
    """Every tensor's buffer again after one Invoke with zeroed inputs: TFLite allocates dynamic
    tensors, the ops after them and control-flow subgraphs (CALL_ONCE's, a WHILE body that
    resizes) while running. The Invoke runs in a forked copy of this process, so a model that
    loops forever or crashes on zeros costs only this figure: {"subgraphs", "located"}, or
    {"error": one line}."""
    if not hasattr(os, "fork"):
        return {"error": "not measured: running the model in a copy of the process needs fork"}
    import select

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the copy: invoke, measure, write one JSON object, leave without cleanup
        os.close(read_end)
        try:
            data = _invoke_and_measure(wrapper, count, wanted)
        except BaseException as e:  # anything at all: the parent must get an answer
            data = {"error": _first_sentence(str(e)) or type(e).__name__}
        payload = json.dumps(data).encode()
        while payload:
            payload = payload[os.write(write_end, payload):]
        os._exit(0)
    os.close(write_end)
    chunks, deadline = [], INVOKE_LIMIT
    import time
    start = time.monotonic()
    while True:
        left = deadline - (time.monotonic() - start)
        ready, _, _ = select.select([read_end], [], [], max(left, 0))
        if not ready:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(read_end)
            return {"error": f"one Invoke did not finish within {INVOKE_LIMIT:.0f} s"}
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    try:
        return json.loads(b"".join(chunks).decode())
    except ValueError:
        signal_number = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        return {"error": f"Invoke crashed the runtime (signal {signal_number})" if signal_number
                else "Invoke ended without a measurement"}


def _invoke_and_measure(wrapper, count: int, wanted: set[tuple[int, int]]) -> dict:
    import numpy as np

    with captured_output() as output:
        try:
            for i in wrapper.InputIndices():
                if getattr(wrapper.TensorType(int(i), 0), "__name__", "") == "bytes_":
                    # A string input never set has no buffer: reading it crashes the
                    # interpreter, so it gets empty strings without being read.
                    shape = [int(d) for d in wrapper.TensorSize(int(i), 0)]
                    wrapper.SetTensor(int(i), np.full(shape, b"", dtype=np.bytes_))
                    continue
                current = np.asarray(wrapper.GetTensor(int(i)))
                if current.dtype != object:
                    wrapper.SetTensor(int(i), np.zeros_like(current))
            wrapper.Invoke()
            error = None
        except Exception as e:
            error = e
    if error is not None:
        return {"error": reason_of(error, output)}
    subgraphs = [[_tensor_row(wrapper, i, s) for i in range(wrapper.NumTensors(s))]
                 for s in range(count)]
    return {"subgraphs": subgraphs, "located": _locate_copies(wrapper, subgraphs, wanted)}


def _locate_copies(wrapper, subgraphs: list[list[list]],
                   wanted: set[tuple[int, int]]) -> list[list[int]]:
    """Rows of the wanted 0-d tensors get the address locate_hidden finds; returns
    [subgraph, index] of each found."""
    hidden = [(s, row[0]) for s, rows in enumerate(subgraphs) for row in rows
              if (s, row[0]) in wanted and row[1] is None and "copy" in str(row[2])]
    found = locate_hidden(wrapper, hidden)
    for (s, i), address in found.items():
        import numpy as np
        subgraphs[s][i] = [i, address, int(np.asarray(wrapper.GetTensor(i, s)).nbytes)]
    return sorted([s, i] for s, i in found)


# -- TFLite Micro ---------------------------------------------------------------------------------

def recorded(lines: list[str], what: str) -> int | None:
    """A figure of print_allocations() (`head`, `tail` or `total`) from its captured lines."""
    for line in lines:
        if f"Arena allocation {what} " in line:
            return int(line.split(f"Arena allocation {what} ")[1].split()[0])
    return None


def probe_tflm(path: str, arena_bytes: int) -> None:
    try:
        from tflite_micro import runtime
    except ImportError:
        emit({"missing": "tflite-micro"}, EXIT_MISSING)
    version = package_version("tflite-micro")
    with captured_output() as output:
        try:
            it = runtime.Interpreter.from_file(
                path, arena_size=arena_bytes,
                intrepreter_config=runtime.InterpreterConfig.kAllocationRecording)
            error = None
        except Exception as e:
            error = e
    if error is not None:
        emit({"runtime": "tflite-micro", "version": version, "arena_bytes": arena_bytes,
              "reason": reason_of(error, output)}, EXIT_REFUSED)
    with captured_output() as recording:
        it.print_allocations()
    emit({"runtime": "tflite-micro", "version": version, "arena_bytes": arena_bytes,
          "head": recorded(recording, "head"), "tail": recorded(recording, "tail"),
          "total": recorded(recording, "total")})


def main(argv: list[str]) -> None:
    if len(argv) >= 2 and argv[0] == "tflite":
        wanted = argv[2] if len(argv) >= 3 and argv[2] != "-" else None
        locate = tuple(tuple(int(x) for x in pair.split(".")) for pair in argv[3].split(",")
                       if pair) if len(argv) >= 4 else ()
        signatures = tuple(int(x) for x in argv[4].split(",") if x) if len(argv) >= 5 else ()
        probe_tflite(argv[1], wanted, locate, signatures)
    elif len(argv) >= 3 and argv[0] == "tflm":
        probe_tflm(argv[1], int(argv[2]))
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
