"""The placement loop (`_placement.place`) as plain Python is fastest when written for Python: the
same offsets, found through an index that suits lists rather than int64 arrays. It serves the
loop's uncompiled runs on short-lived records, `package` at 100,000 operators among them (numba
is not loaded there).

The index is the dense timeline (`records.TimeColumns`: two records conflict iff their dense
intervals meet): per step, the placed records alive at it and those starting at it, each as an
(offset, end) pair. The placed records conflicting with [f, l] are then exactly those alive at f
plus those starting in (f, l]: each once, none to filter out.

Found records are sorted by offset alone, without the bucket walk's order between equal offsets:
with every placed record non-empty (empty records are skipped, never placed) and the record being
placed non-empty, records at one offset can only open a gap at the first of them, so the gap
searches give the same answer in any order. That is why the loop takes this form only when empty
records are skipped.
"""

from __future__ import annotations

# The steps a record spans on average, above which the per-step lists cost more than the buckets'
# walk (each record joins the list of every step of its life).
STEPS_PER_RECORD = 16


def fits(dense_first, dense_last) -> bool:
    """Whether records with these dense intervals (int64 arrays) are short-lived enough."""
    n = len(dense_first)
    return int((dense_last - dense_first).sum()) + n <= STEPS_PER_RECORD * n


def place_by_steps(first, last, size, order, align, best_fit, remember_unaligned, alive, starts,
                   offsets, watch, limit, state):
    """`_placement.place` without fixed records, empty records skipped: `first`/`last` are the
    dense intervals (lists), `alive`/`starts` an empty tuple per dense step to begin with (kept
    between a stopped call and the call that resumes it), `state` [next step] ([0] to begin
    with). Returns -1 at the end, -2 when stopped by `limit` (as `place`).

    Tuples, not lists, per step: a step's few entries are copied on each addition, but the
    collector no longer walks a list per step (hundreds of thousands of them at 100,000 records,
    kept while a stopped run waits), and steps never used cost nothing."""
    for t in range(state[0], len(order)):
        i = order[t]
        s = size[i]
        if s == 0:
            continue
        f = first[i]
        la = last[i]
        if f == la:
            found = sorted(alive[f])
        else:
            found = list(alive[f])
            for started in starts[f + 1:la + 1]:
                found += started
            found.sort()
        # The gap search (`_gaps.smallest_gap_offset` or `lowest_offset`), as `place` has it.
        best_start, best_gap, current = -1, 0, 0
        for o, e in found:
            if o - current >= s:
                start = -(-current // align) * align
                if start + s <= o:
                    if not best_fit:
                        best_start = start
                        break
                    if best_start < 0 or o - start < best_gap:
                        best_start = start
                        best_gap = o - (current if remember_unaligned else start)
            if e > current:
                current = e
        offset = best_start if best_start >= 0 else -(-current // align) * align
        offsets[i] = offset
        entry = ((offset, offset + s),)
        starts[f] += entry
        for step in range(f, la + 1):
            alive[step] += entry
        if limit >= 0 and watch[i] >= 0 and offset + watch[i] > limit:
            state[0] = t + 1
            return -2
    state[0] = len(order)
    return -1


def bucket_state(first, last, size, order, done, offsets, width, n_buckets, entries):
    """The buffers `_placement.place` would hold after placing order[:done] (empty records
    skipped) with the offsets found: (head, nxt, who, start_of, end_of, entries used), so that
    a stopped run can go on in that loop (compiled). `first`/`last` are operator indices here."""
    n = len(first)
    head, nxt, who = [-1] * n_buckets, [0] * entries, [0] * entries
    start_of, end_of = [0] * n, [0] * n
    used = 0
    for i in order[:done]:
        s = size[i]
        if s == 0:
            continue
        start_of[i] = offsets[i]
        end_of[i] = offsets[i] + s
        for b in range(first[i] // width, last[i] // width + 1):
            who[used] = i
            nxt[used] = head[b]
            head[b] = used
            used += 1
    return head, nxt, who, start_of, end_of, used
