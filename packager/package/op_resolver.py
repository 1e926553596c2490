"""`<prefix>_op_resolver.h`: TFLite Micro's `MicroMutableOpResolver<N>` with exactly the operators
the model runs, so a firmware learns of a missing registration when it compiles, not at run time.

TFLite Micro looks up a kernel for every operator of every subgraph while it sets the model up (an
operator code no operator uses needs none), and each `Add...()` takes one of the resolver's N
places, so N is the number of distinct operators run. A custom op TFLite Micro has no kernel for
becomes a parameter of the registering function: the firmware cannot call it without passing its
kernel. A builtin TFLite Micro has no kernel for is named in the file and in a note: no resolver
can make such a model set up.
"""

from __future__ import annotations

from dataclasses import dataclass

from packager.emit.c_text import block_comment, comment_text, identifier
from packager.kernels.tflm_op_resolver import add_method
from packager.model import Model


@dataclass(frozen=True)
class Registration:
    name: str  # the builtin's enum name, or the custom code
    custom: bool
    method: str | None  # the resolver's Add...() for it; None: TFLite Micro has no kernel for it
    uses: int  # how many operators of the model run it


def registrations(model: Model) -> list[Registration]:
    """Every distinct operator the model runs: TFLite Micro's own first (by method name), then the
    custom ops the user registers (by name), then the builtins TFLite Micro cannot run (by name)."""
    uses: dict[tuple[str, bool], int] = {}
    for sg in model.subgraphs:
        for op in sg.operators:
            key = (op.name, op.opcode.is_custom)
            uses[key] = uses.get(key, 0) + 1
    found = [Registration(name, custom, add_method(name, custom), n) for (name, custom), n in uses.items()]
    return (sorted((r for r in found if r.method), key=lambda r: r.method)
            + sorted((r for r in found if not r.method and r.custom), key=lambda r: r.name)
            + sorted((r for r in found if not r.method and not r.custom), key=lambda r: r.name))


def resolver_count(regs: list[Registration]) -> int:
    """N: a place for every operator registered, the user's custom ops included."""
    return sum(1 for r in regs if r.method or r.custom)


def missing_builtins(regs: list[Registration]) -> list[str]:
    return [r.name for r in regs if not r.method and not r.custom]


def resolver_note(model: Model) -> str | None:
    """The one line `package` prints when TFLite Micro has no kernel for a builtin the model runs."""
    missing = missing_builtins(registrations(model))
    if not missing:
        return None
    return (f"TFLite Micro has no kernel for builtin {', '.join(missing)}: the model will not set up in "
            f"TFLite Micro (the op resolver leaves {'it' if len(missing) == 1 else 'them'} out)")


def c_string(text: str) -> str:
    """A C string literal of `text`'s UTF-8 bytes: printable ASCII kept, the rest as octal escapes
    (three digits, so a following digit is never read into one; '?' too, against trigraphs)."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        out.append(ch if " " <= ch <= "~" and ch not in '"\\?' else f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _parameters(regs: list[Registration]) -> dict[str, str]:
    """Custom code -> the name of the parameter that brings its kernel (distinct C identifiers)."""
    names: dict[str, str] = {}
    for r in regs:
        if r.custom and not r.method:
            base = name = "register_" + identifier(r.name, "op").lower()
            k = 2
            while name in names.values() or name == "resolver":
                name, k = f"{base}_{k}", k + 1
            names[r.name] = name
    return names


def _uses(r: Registration) -> str:
    return f"{r.uses} operator{'s' if r.uses != 1 else ''}"


def render(model: Model, prefix: str, source_name: str) -> bytes:
    regs = registrations(model)
    params = _parameters(regs)
    P, count = prefix.upper(), resolver_count(regs)
    guard = f"{P}_OP_RESOLVER_H_"
    ours = [r for r in regs if r.method]
    lines = block_comment([
        f"{prefix}_op_resolver.h: TFLite Micro's op resolver for {source_name}, written by tflpack.",
        f"Exactly the operators its subgraphs run: {count} registration(s), N = {P}_OP_COUNT.",
        "",
        f"    {prefix}_op_resolver resolver;",
        f"    if ({prefix}_register_ops(resolver{''.join(', ' + n for n in params.values())}) != kTfLiteOk) return;  // a registration failed",
        "    tflite::MicroInterpreter interpreter(model, resolver, arena, arena_bytes);",
    ] + ([""] + [f"Custom op {r.name}: TFLite Micro has no kernel for it; pass your kernel's registration as "
                  f"{params[r.name]} (the TFLMRegistration* your Register_...() function returns)."
                  for r in regs if r.custom and not r.method] if params else [])
      + ([""] + [f"NOT REGISTERED: builtin {r.name} ({_uses(r)}): TFLite Micro has no kernel for it, so "
                  "the model will not set up in TFLite Micro." for r in regs if not r.method and not r.custom]
         if missing_builtins(regs) else []))
    lines += [f"#ifndef {guard}", f"#define {guard}", "",
              "#ifndef __cplusplus",
              f"#error \"{prefix}_op_resolver.h is C++: TFLite Micro's op resolver is a C++ template\"",
              "#endif", "",
              '#include "tensorflow/lite/micro/micro_mutable_op_resolver.h"', "",
              f"#define {P}_OP_COUNT {count}", "",
              f"typedef tflite::MicroMutableOpResolver<{P}_OP_COUNT> {prefix}_op_resolver;", "",
              "/* Registers every operator the model runs; kTfLiteOk, or kTfLiteError at the first that fails. */",
              f"inline TfLiteStatus {prefix}_register_ops({prefix}_op_resolver& resolver"
              + "".join(f",\n    const TFLMRegistration* {n}" for n in params.values()) + ") {"]
    for r in ours:
        what = f"custom op {r.name}" if r.custom else r.name
        lines.append(f"  if (resolver.{r.method}() != kTfLiteOk) return kTfLiteError;  "
                     f"/* {comment_text(what)}: {_uses(r)} */")
    for r in regs:
        if r.custom and not r.method:
            lines.append(f"  if (resolver.AddCustom({c_string(r.name)}, {params[r.name]}) != kTfLiteOk) "
                         f"return kTfLiteError;  /* custom op {comment_text(r.name)}: {_uses(r)} */")
    lines += ["  return kTfLiteOk;", "}", "", f"#endif /* {guard} */", ""]
    return "\n".join(lines).encode("ascii")
