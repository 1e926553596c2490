"""What the TFLite GPU delegate's backends would allocate for a model's intermediate tensors, by their
memory-assignment policies (read in the delegate's OpenCL, Metal and OpenGL sources), beside our
best plan of the same tensors. A policy applied to the tensors as the packager plans them, not a
measurement of a GPU.

The delegate's rules used here:
- Tensors: the main subgraph's intermediate tensors, alive from the operator that writes them to
  their last reader (the paper's semantics); the graph's inputs and outputs are bound to memory
  the application owns, so they are left out. Shapes become BHWC (missing axes 1).
- Sizes: a buffer holds B*H*W*align(C, 4) elements (channels padded to 4); a 2D texture is
  W*B texels wide and H*ceil(C/4) high, 4 channels a texel; an element is 4 bytes (FP32, the
  default) or 2 (FP16).
- OpenCL and Metal, buffers: GREEDY_BEST shared objects, and GREEDY_BY_SIZE offsets in one
  buffer, used when no larger than the objects (OpenCL only where sub-buffers exist). OpenCL,
  textures: EQUALITY over whole tensor descriptors (a texture is shared only by equal shapes).
- OpenGL: GREEDY_BEST for buffers, GREEDY_IN_ORDER for 2D textures (a texture serves any tensor
  it covers).
The device's base-address alignment (OpenCL, Metal) is taken as 1 byte: a device's own rounds
each offset up. Before assigning memory the delegate links element-wise operators into the
operator before them and rewrites some (padding into convolutions, biases into adds, global pooling
into a mean): tensors it removes take no memory there, so its figures can be lower than these.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from packager.lifetimes import model_lifetimes
from packager.model import Model
from packager.plan.objects import gpu_delegate, gpu_equality, gpu_greedy_in_order, texture_2d
from packager.plan.offsets import gpu_greedy_by_size
from packager.plan.portfolio import run_portfolio
from packager.plan.problem import Problem
from packager.plan.records import ObjectPlan
from packager.plan.validate import check_object_plan, check_offset_plan

CAVEAT = ("the delegate's memory-assignment policies applied to the model's tensors as planned here, "
          "not a measurement of a GPU; the delegate first links element-wise operators into the one "
          "before them and rewrites some (padding, bias, global pooling), which the packager does not model, "
          "so tensors it removes would take no memory there")


@dataclass(frozen=True)
class Row:
    backend: str
    storage: str  # "buffers" or "2D textures"
    policy: str  # the delegate's rule, in words
    delegate_bytes: int
    delegate_plan: str  # what the delegate would make, in words
    ours_bytes: int
    ours_plan: str


@dataclass(frozen=True)
class GpuAnswer:
    tensors: int
    element_bytes: int
    rows: tuple[Row, ...]
    left_out: tuple[int, ...]  # tensors of rank above 4: not a GPU tensor
    caveat: str = CAVEAT


def bhwc(shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    b, h, w, c = (1,) * (4 - len(shape)) + tuple(shape)
    return b, h, w, c


def gpu_answer(model: Model, element_bytes: int = 4) -> GpuAnswer:
    arena = model_lifetimes(model, "paper")[0]
    sg = model.subgraphs[arena.subgraph]
    external = {t for t in (*sg.inputs, *sg.outputs) if t >= 0}
    # In tensor order, as the delegate takes its values by id.
    records = sorted((r for r in arena.records if r.tensor not in external), key=lambda r: r.tensor)
    left_out = tuple(r.tensor for r in records if len(sg.tensors[r.tensor].shape) > 4)
    records = [r for r in records if r.tensor not in left_out]
    shapes = [bhwc(sg.tensors[r.tensor].shape) for r in records]
    buffers = [replace(r, size=b * h * w * -(-c // 4) * 4 * element_bytes)
               for r, (b, h, w, c) in zip(records, shapes)]
    extents = [(w * b, h * -(-c // 4)) for b, h, w, c in shapes]
    texel = 4 * element_bytes
    textures = [replace(r, size=w * h * texel) for r, (w, h) in zip(records, extents)]
    rows = []
    if records:
        rows += _buffer_rows(buffers)
        rows += _texture_rows(textures, shapes, extents, texel)
    return GpuAnswer(len(records), element_bytes, tuple(rows), left_out)


def _buffer_rows(buffers) -> list[Row]:
    objects = gpu_delegate.OBJECTS["GREEDY_BEST"](buffers)
    offsets = gpu_greedy_by_size.plan(buffers, 1)
    check_object_plan(buffers, objects)  # the delegate's plans too pass the validator
    check_offset_plan(buffers, offsets)
    ours = run_portfolio(Problem(records=tuple(buffers)), baselines=False)
    best_offsets, best_objects = ours.best_offsets, ours.best_objects
    ours_plan = f"{best_offsets.strategy}: one buffer of {best_offsets.total:,} B"
    one_buffer = offsets.arena <= objects.total
    chosen = (f"GREEDY_BY_SIZE offsets: one buffer of {offsets.arena:,} B" if one_buffer else
              f"GREEDY_BEST: {len(objects.object_sizes)} buffers")
    rule = "GREEDY_BEST objects, or GREEDY_BY_SIZE offsets when no larger"
    gl_ours = (f"{best_objects.strategy}: {len(best_objects.plan.object_sizes)} buffers"
               if best_objects is not None else "none")
    return [
        Row("OpenCL", "buffers", rule + " (with sub-buffers)", min(offsets.arena, objects.total), chosen,
            best_offsets.total, ours_plan),
        Row("Metal", "buffers", rule, min(offsets.arena, objects.total), chosen, best_offsets.total, ours_plan),
        Row("OpenGL", "buffers", "GREEDY_BEST objects", objects.total,
            f"GREEDY_BEST: {len(objects.object_sizes)} buffers",
            best_objects.total if best_objects is not None else objects.total, gl_ours),
    ]


def _texture_rows(textures, shapes, extents, texel: int) -> list[Row]:
    equal_shapes = gpu_equality.plan_extents(textures, shapes)  # descriptors: equal shapes share
    cl_bytes = sum(w * (h * -(-c // 4)) * b * texel for b, h, w, c in equal_shapes.object_extents)
    covering = gpu_delegate.in_first_task_order_extents(gpu_greedy_in_order.plan_extents, textures, extents)
    gl_bytes = covering.total * texel
    ours = texture_2d.plan(textures, extents, texel)
    for plan in (equal_shapes, covering):  # each texture as bytes: its largest member's
        sizes = [0] * len(plan.object_extents)
        for r, obj in zip(textures, plan.assignment):
            sizes[obj] = max(sizes[obj], r.size)
        check_object_plan(textures, ObjectPlan(plan.strategy, plan.assignment, tuple(sizes)))
    check_object_plan(textures, ours)
    ours_bytes, ours_plan = min((ours.total, f"texture_2d: {len(ours.object_sizes)} textures"),
                                (gl_bytes, f"GREEDY_IN_ORDER: {len(covering.object_extents)} textures"))
    cl_plan = f"EQUALITY: {len(equal_shapes.object_extents)} textures"
    return [
        # An OpenCL image serves only its own descriptor: no plan of equal-shape sharing does better.
        Row("OpenCL", "2D textures", "EQUALITY over tensor descriptors", cl_bytes, cl_plan, cl_bytes,
            "the same (an image serves only its own shape; buffers above)"),
        Row("OpenGL", "2D textures", "GREEDY_IN_ORDER over extents", gl_bytes,
            f"GREEDY_IN_ORDER: {len(covering.object_extents)} textures", ours_bytes, ours_plan),
    ]
