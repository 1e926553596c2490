"""Check a packaged plan against its model: the records it states must be the ones the model gives
under its semantics, and its offsets and objects must pass the independent validator.

Run on every plan right before it is written, and by `package.load.load` on every plan read back, so a
plan file edited by hand (or damaged) is refused even when its own numbers look consistent.
"""

from __future__ import annotations

from itertools import chain
from typing import Sequence

import numpy as np

from packager.dynamic.shapes import analyse, is_static
from packager.dynamic.stored_batch import stored_batch
from packager.errors import ModelError, PlanError
from packager.kernels.tflm_offline_plan import METADATA_NAME, decode
from packager.lifetimes import PERSISTENT
from packager.model import Model
from packager.package.assemble import symbol_entries
from packager.package.sidecar import TENSOR, ArenaSection, PackagePlan, offset_plan_of
from packager.plan.offsets.exact_search import check_optimal_claim
from packager.plan.portfolio import validate
from packager.plan.registry import EXACT_NODES
from packager.plan.problem import Problem
from packager.plan.records import ObjectPlan, OffsetPlan, Records, arena_of
from packager.plan.validate import Proven
from packager.arenas import ArenaToPlan, Bindings, arenas_to_plan, problem_of
from packager.package.tflite_patch import patched_payload
from packager.semantics import SEMANTICS


def _mismatch(message: str) -> PlanError:
    return PlanError(f"the plan does not match the model: {message}")


def check_package_plan(plan: PackagePlan, model: Model, proven: Sequence[Proven] = ()) -> None:
    """Raise PlanError unless the plan is valid for this model. `proven`: plans the checker has
    passed already (the planner's): a stated plan with the same numbers for the same records is
    not proven again."""
    sem = SEMANTICS.get(plan.semantics)
    if sem is None:
        raise PlanError(f"unknown semantics '{plan.semantics}' in the plan")
    if plan.alignment != sem.alignment:
        raise _mismatch(f"alignment {plan.alignment}, but {plan.semantics} semantics use {sem.alignment}")
    counts = tuple(len(sg.tensors) for sg in model.subgraphs)
    if plan.source.subgraph_tensor_counts != counts:
        raise _mismatch(f"tensor counts per subgraph {list(plan.source.subgraph_tensor_counts)}, "
                        f"the model has {list(counts)}")
    expected = expected_arenas(plan, model)
    if len(plan.arenas) != len(expected):
        raise _mismatch(f"{len(plan.arenas)} arenas, the model has {len(expected)}")
    for section, arena in zip(plan.arenas, expected):
        lifetimes = arena.lifetimes
        where = "whole-model arena" if section.inline else f"arena of subgraph {section.subgraph}"
        if (section.subgraph, section.inline) != (lifetimes.subgraph, lifetimes.inline):
            raise _mismatch(f"{where}: expected subgraph {lifetimes.subgraph}")
        problem = problem_of(lifetimes)
        try:
            _check_arena(section, problem, plan.alignment, proven)
            _check_dynamic(section, arena, problem, plan.alignment)
        except PlanError as e:
            raise PlanError(f"{where}: {e}") from None
        persistent = tuple(lifetimes.ids(PERSISTENT))
        if tuple(p.index for p in section.persistent) != persistent:
            raise _mismatch(f"{where}: persistent tensors {[p.index for p in section.persistent]}, "
                            f"expected {list(persistent)}")
        _check_names(section, model)


def expected_arenas(plan: PackagePlan, model: Model) -> list[ArenaToPlan]:
    """What the model gives under the plan's semantics, at the bounds the plan states: the records
    of the one path (packager/arenas.py) that made the plan."""
    return arenas_to_plan(model, plan.semantics, bindings_of(plan, model))


def bindings_of(plan: PackagePlan, model: Model) -> Bindings | None:
    """The model's symbols under the names the plan gives them, bounded as the plan says; None
    for a static model. The symbols must be the model's: same sources, passes and order."""
    if not plan.symbols and is_static(model):
        return None
    shapes = analyse(model)
    if not shapes.is_dynamic and not plan.symbols:
        return None
    at_stored_shape = not any(e for a in plan.arenas for e in a.offsets.tensors.size_expr)
    batch = stored_batch(model, ()) if not plan.symbols and at_stored_shape else None
    if batch is not None and not batch.placeholders:
        return None  # a dynamic batch planned at the stored shape, which the runtimes run
    if len(plan.symbols) != len(shapes.symbols):
        found = ", ".join(s.name for s in shapes.symbols) or "none"
        raise _mismatch(f"{len(plan.symbols)} symbols stated, the model has {len(shapes.symbols)} ({found})")
    renames = {s.name: stated.name for s, stated in zip(shapes.symbols, plan.symbols) if s.name != stated.name}
    if renames:  # the user renamed symbols with --dim OLD:NEW=...
        shapes = analyse(model, 0, renames)
    bounds = {s.name: (s.min, s.max) for s in plan.symbols}
    if [s.name for s in shapes.symbols] != list(bounds) or symbol_entries(shapes, bounds) != plan.symbols:
        raise _mismatch("the symbols differ from the model's (name, source or pass)")
    for s in plan.symbols:
        if not 0 <= s.min <= s.max:
            raise PlanError(f"symbol '{s.name}' has the bounds [{s.min}, {s.max}]")
    return Bindings(shapes, bounds)


def _check_dynamic(section: ArenaSection, arena: ArenaToPlan, expected: Problem, alignment: int) -> None:
    """Each tensor's pass and size expression are the model's, and the multi-pass plan is a valid
    plan of the same records (nothing of it for a static model)."""
    sizes = arena.sizes
    if sizes is not None or not _static_entries(section):  # entry by entry, to name a difference
        for t in section.offsets.tensors:
            want = (0, None) if sizes is None else (sizes.passes[t.index], str(sizes.expressions[t.index]))
            if (t.pass_, t.size_expr) != want:
                raise _mismatch(f"tensor {t.index} is stated in pass {t.pass_} with size {t.size_expr}, "
                                f"the model gives pass {want[0]} with size {want[1]}")
    if (sizes is None) != (section.passes is None):
        raise _mismatch("a multi-pass plan is stated for a static model, or missing for a dynamic one")
    if section.passes is None:
        return
    stated = dict(section.passes.offsets)
    if len(stated) != len(section.passes.offsets) or stated.keys() != {r.tensor for r in expected.records}:
        raise _mismatch("the multi-pass plan does not cover exactly the planned tensors")
    offsets = tuple(stated[r.tensor] for r in expected.records)
    try:
        validate(expected, OffsetPlan("passes", offsets, section.passes.arena_bytes, alignment))
    except PlanError as e:
        raise PlanError(f"multi-pass plan: {e}") from None
    if section.passes.arena_bytes != arena_of(expected.records, offsets):
        raise PlanError(f"multi-pass plan: arena of {section.passes.arena_bytes} B stated, the offsets "
                        f"need {arena_of(expected.records, offsets)} B")


def _static_entries(section: ArenaSection) -> bool:
    """Every entry in pass 0 without a size expression, as a static model gives them (columns)."""
    try:
        columns = section.offsets.tensors
    except (OverflowError, TypeError, ValueError):
        return False
    return not columns["pass_"].any() and columns.size_expr.count(None) == columns.count


def _check_arena(section: ArenaSection, expected: Problem, alignment: int, proven: Sequence[Proven]) -> None:
    offsets = _matching_offsets(section, expected)
    if offsets is None:  # something differs: the entry-by-entry check finds it and says what
        offsets = _stated_offsets(section, expected, alignment)
    plan = OffsetPlan(section.offsets.strategy, offsets, section.offsets.arena_bytes, alignment)
    _validated(expected, plan, proven)
    if plan.arena != _arena_of(expected.records, offsets):
        raise PlanError(f"arena of {plan.arena} B stated, the offsets need {arena_of(expected.records, offsets)} B")
    if section.offsets.lower_bound != expected.offset_lower_bound:
        raise PlanError(f"lower bound {section.offsets.lower_bound} stated, it is {expected.offset_lower_bound}")
    if section.offsets.optimal:
        _check_optimal_offsets(expected, plan.arena, alignment)
    _check_objects(section, expected, proven)


def _matching_offsets(section: ArenaSection, expected: Problem) -> tuple[int, ...] | None:
    """The stated offsets in the model's record order when the section states exactly the
    model's records and aliases, compared column by column; None when anything differs (or
    does not fit the columns), for the entry-by-entry check to find and name."""
    try:
        columns = section.offsets.tensors
        planned = columns.planned
        ids = columns["index"][planned]
        want = _record_columns(expected.records)
        if len(ids) != len(want["tensor"]):
            return None
        order, want_order = np.argsort(ids, kind="stable"), np.argsort(want["tensor"], kind="stable")
        in_order = ids[order]
        if np.any(in_order[1:] == in_order[:-1]):  # a tensor listed twice
            return None
        if not np.array_equal(in_order, want["tensor"][want_order]):
            return None
        for field in ("first_op", "last_op", "size"):
            if not np.array_equal(columns[field][planned][order], want[field][want_order]):
                return None
        at = np.empty(len(ids), dtype=np.int64)  # the planned entry of each record, in the model's order
        at[want_order] = order
        offsets = columns["offset"][planned]
    except (OverflowError, TypeError, ValueError):
        return None
    if not _aliases_match(section, expected, ids[order], offsets[order]):
        return None
    return tuple(offsets[at].tolist())


def _aliases_match(section: ArenaSection, expected: Problem, sorted_ids: np.ndarray,
                   their_offsets: np.ndarray) -> bool:
    """The aliases, their intervals and their offsets (each its owner's) are the model's."""
    aliases, intervals, offsets = {}, {}, {}
    tensors = section.offsets.tensors
    for t in tensors.entries(np.flatnonzero(~tensors.planned).tolist()):
        if t.alias_of is not None:
            aliases[t.index], intervals[t.index] = t.alias_of, (t.first_op, t.last_op)
            offsets.setdefault(t.alias_of, set()).add(t.offset)
    if aliases != expected.aliases or any(a not in expected.alias_intervals for a in aliases):
        return False
    if intervals != {a: expected.alias_intervals[a] for a in aliases}:
        return False
    for owner, stated in offsets.items():
        k = int(np.searchsorted(sorted_ids, owner))
        if k == len(sorted_ids) or sorted_ids[k] != owner or stated != {int(their_offsets[k])}:
            return False
    return True


def _arena_of(records: Records, offsets: tuple[int, ...]) -> int:
    """arena_of, over the records' columns where the numbers fit int64 (a valid plan's do)."""
    try:
        ends = np.fromiter(offsets, dtype=np.int64, count=len(offsets)) + _record_columns(records)["size"]
    except (OverflowError, TypeError, ValueError):
        return arena_of(records, offsets)
    if len(ends) != len(records) or (len(ends) and int(np.abs(ends).max()) >= 1 << 62):
        return arena_of(records, offsets)
    return int(ends.max()) if len(ends) else 0


def _record_columns(records: Records) -> dict[str, np.ndarray]:
    """The records' columns under the names of their fields (read-only)."""
    return dict(zip(("tensor", "first_op", "last_op", "size"), records.columns()))


def _stated_offsets(section: ArenaSection, expected: Problem, alignment: int) -> tuple[int, ...]:
    """The entry-by-entry check of the section's records and aliases against the model's: raises
    PlanError naming the first difference; the stated offsets in the model's record order."""
    records, stated, aliases, intervals = offset_plan_of(section, alignment)
    by_id = {r.tensor: (r, o) for r, o in zip(records, stated.offsets)}
    if len(by_id) != len(records):
        raise _mismatch("a tensor is listed twice")
    want = {r.tensor: r for r in expected.records}
    if by_id.keys() != want.keys():
        missing, extra = sorted(want.keys() - by_id.keys()), sorted(by_id.keys() - want.keys())
        raise _mismatch(f"planned tensors differ (missing {missing[:5]}, unexpected {extra[:5]})")
    for t, r in want.items():
        if by_id[t][0] != r:
            raise _mismatch(f"tensor {t} is stated as {_show(by_id[t][0])}, the model gives {_show(r)}")
    if aliases != expected.aliases or intervals != {a: expected.alias_intervals[a] for a in aliases}:
        raise _mismatch("the aliases differ from the model's")
    for t in section.offsets.tensors:
        if t.alias_of is not None and t.offset != by_id[t.alias_of][1]:
            raise PlanError(f"alias {t.index} is not at the offset of tensor {t.alias_of}")
    # Re-validated in the model's own record order, with the plan's numbers.
    return tuple(by_id[r.tensor][1] for r in expected.records)


def _validated(expected: Problem, plan: OffsetPlan | ObjectPlan, proven: Sequence[Proven]) -> None:
    """The validator's gate, unless a proof of the same numbers for the same records is at hand."""
    if not any(p.same_numbers(plan, expected.records) for p in proven):
        validate(expected, plan)


def _check_objects(section: ArenaSection, expected: Problem, proven: Sequence[Proven]) -> None:
    in_order = _objects_in_record_order(section, expected)
    if in_order is None:  # something differs or does not fit the columns: entry by entry
        want = {r.tensor for r in expected.records}
        assigned = dict(section.objects.assignment)
        if assigned.keys() != want or len(assigned) != len(section.objects.assignment):
            raise _mismatch("the shared-object plan does not cover exactly the planned tensors")
        in_order = tuple(assigned[r.tensor] for r in expected.records)
    objects = section.objects
    _validated(expected, ObjectPlan(objects.strategy, in_order, objects.object_sizes), proven)
    if section.objects.total_bytes != sum(objects.object_sizes):
        raise PlanError("shared-object total differs from the sum of the object sizes")
    if section.objects.lower_bound != expected.object_lower_bound:
        raise PlanError(f"shared-object lower bound {section.objects.lower_bound} stated, "
                        f"it is {expected.object_lower_bound}")


def _objects_in_record_order(section: ArenaSection, expected: Problem) -> tuple[int, ...] | None:
    """Each record's object when the assignment covers exactly the records, each once (whole
    columns at once); None otherwise."""
    pairs = section.objects.assignment
    ids = _record_columns(expected.records)["tensor"]
    if len(pairs) != len(ids):
        return None
    try:
        flat = np.fromiter(chain.from_iterable(pairs), dtype=np.int64, count=2 * len(pairs))
    except (OverflowError, TypeError, ValueError):
        return None
    tensors, objects = flat[0::2], flat[1::2]
    order, want_order = np.argsort(tensors, kind="stable"), np.argsort(ids, kind="stable")
    by_tensor = tensors[order]
    if np.any(by_tensor[1:] == by_tensor[:-1]) or not np.array_equal(by_tensor, ids[want_order]):
        return None
    in_order = np.empty(len(ids), dtype=np.int64)
    in_order[want_order] = objects[order]
    return tuple(in_order.tolist())


def _check_optimal_offsets(expected: Problem, arena: int, alignment: int) -> None:
    """An "optimal" claim is proved again: at the bound, or by the exact search's deterministic
    probe one byte below, with the node budget `best` gives that search."""
    claim = check_optimal_claim(expected.records, alignment, arena, EXACT_NODES)
    if not claim.holds:
        raise PlanError(f"the offsets are stated optimal at {arena} B, but {claim.reason}")


def _check_names(section: ArenaSection, model: Model) -> None:
    if _names_match(section, model):
        return
    for t in section.offsets.tensors:  # something differs: entry by entry, to name it
        if t.kind != TENSOR:
            continue
        if not (0 <= t.subgraph < len(model.subgraphs)
                and 0 <= t.tensor < len(model.subgraphs[t.subgraph].tensors)):
            raise _mismatch(f"tensor {t.index} points to subgraph {t.subgraph} tensor {t.tensor}")
        if model.subgraphs[t.subgraph].tensors[t.tensor].name != t.name:
            raise _mismatch(f"tensor {t.index} is called '{t.name}' in the plan")


def _names_match(section: ArenaSection, model: Model) -> bool:
    """Every tensor entry points into the model and has its tensor's name (whole columns at
    once); False when anything differs or does not fit the columns."""
    try:
        columns = section.offsets.tensors
    except (OverflowError, TypeError, ValueError):
        return False
    kinds = np.fromiter(map(TENSOR.__eq__, columns.kind), dtype=bool, count=columns.count)
    which = np.flatnonzero(kinds)
    s, t = columns["subgraph"][which], columns["tensor"][which]
    counts = np.array([len(sg.tensors) for sg in model.subgraphs], dtype=np.int64)
    if np.any((s < 0) | (s >= len(counts))) or np.any((t < 0) | (t >= counts[np.clip(s, 0, len(counts) - 1)])):
        return False
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    names = [x.name for sg in model.subgraphs for x in sg.tensors]
    wanted = list(map(names.__getitem__, (starts[s] + t).tolist()))
    stated = list(columns.name) if len(which) == columns.count else list(map(columns.name.__getitem__, which.tolist()))
    return wanted == stated


def _show(r) -> str:
    return f"ops {r.first_op}..{r.last_op}, {r.size} B"


def check_offline_model(packed: bytes, plan: PackagePlan, model: Model) -> None:
    """The offline-planned .tflite about to be written: the input's bytes untouched behind a new
    root that points to the input's graph, and its OfflineMemoryAllocation words, read back from
    the bytes, a valid plan."""
    # The prefix-only patch leaves the input's bytes, hence its graph, as they were: check the
    # patch's structure instead of parsing the whole model again.
    try:
        payload = patched_payload(packed, model.raw, METADATA_NAME)
    except ModelError as e:  # our bug, not the user's input: say so
        raise PlanError(f"the offline-planned model does not match its input: {e}") from None
    _, subgraphs, words = decode(payload)
    if len(words) != sum(plan.source.subgraph_tensor_counts) or subgraphs != len(model.subgraphs):
        raise PlanError(f"{METADATA_NAME} holds {len(words)} offsets for {subgraphs} subgraphs")
    (arena,) = expected_arenas(plan, model)
    problem = problem_of(arena.lifetimes)
    # Tensors take the words; scratch buffers (not in the words) where the plan leaves them room.
    ids = _record_columns(problem.records)["tensor"]
    word = np.array(words, dtype=np.int64)
    in_words = (ids >= 0) & (ids < len(word))
    placed = np.zeros(len(ids), dtype=np.int64)
    placed[in_words] = word[ids[in_words]]
    offsets_of = placed.tolist()
    outside = np.flatnonzero(~in_words).tolist()
    if outside:
        stated = {t.index: t.offset for t in plan.arenas[0].planned}
        for k in outside:
            offsets_of[k] = stated[int(ids[k])]
    offsets = tuple(offsets_of)
    if any(o < 0 for o in offsets):
        raise PlanError(f"{METADATA_NAME} leaves a planned tensor to the runtime (-1)")
    validate(problem, OffsetPlan("offline words", offsets, arena_of(problem.records, offsets), plan.alignment))
    unplanned = word >= 0
    unplanned[ids[in_words]] = False
    stray = np.flatnonzero(unplanned)[:5].tolist()
    if stray:
        raise PlanError(f"{METADATA_NAME} places tensors {stray[:5]} that are not planned")
