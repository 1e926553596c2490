"""The placement loop the greedy offset strategies share, as one plain function over flat
sequences, so that the same source runs as Python (lists; any integers) or compiled by numba
(int64 arrays; see `kernels.compiled`) with identical offsets.

Records are placed one by one in a given order, each in the best-fit (or the lowest) gap among
the conflicting records placed before it (see `_gaps.placements` for the rules). The placed
records are indexed by time in buckets of `width` operators (`_placement_kernel.bucket_width` chooses it),
each with two linked lists: the records that start in the bucket, and those that started in an
earlier bucket and are still alive in it. A query reads the second list of its first bucket and
the first lists of the buckets it touches, so it meets every conflicting record exactly once and
few others. It keeps them by decreasing offset as they come (the gap walk reads them backwards):
they are few, and insertion is then the cheapest sort; a query that meets many of them sorts the
rest by a merge sort. Equal offsets need no further order: the gap walk gives the same answer
whichever comes first (an empty record is placed among the others only by the first fit, whose
answer is decided by the first of them).

Everything is one function without calls to helpers: numba compiles only functions it is given,
and the uncompiled run must be the very same code.
"""

from __future__ import annotations

# Up to this many conflicting records, a query keeps them sorted as it finds them (by insertion);
# the rest are sorted afterwards, by a merge sort.
_INSERTION = 24


def place(first, last, size, order, fixed, align, best_fit, remember_unaligned, skip_empty,
          width, starting, passing, nxt, who, earlier, end_of, found, spare, offsets,
          watch, limit, state):
    """Offsets into `offsets` for the records in `order` (positions). `size` holds the sizes to
    place (rounded already where the runtime rounds); `fixed[i]` >= 0 places record i at that
    offset (checked against the records placed before it); `align` aligns the gap starts;
    `best_fit` takes the smallest gap (the first of equal ones) instead of the lowest;
    `remember_unaligned` keeps TFLite's way of remembering the best gap; `skip_empty` leaves
    empty records at 0 and out of the buckets. Buffers: `starting` and `passing` (one per bucket,
    all -1: the newest record starting in it; the newest entry of a record passing through it),
    `nxt` and `who` (one per entry of a record passing through a bucket), `earlier` (one per
    record: the record placed before it that starts in the same bucket), `end_of`/`found`/`spare`
    (one per record); `offsets` (all 0) also serves as each placed record's start.
    `limit` >= 0 stops the loop right after placing a record i with `offset + watch[i] > limit`
    (`watch[i]` < 0: record i never stops it); `state` ([next step, bucket entries used], [0, 0]
    to begin with) then says where a later call with the same buffers resumes.
    Returns -1, the position of a fixed record that overlaps one placed before it, or -2 when
    stopped by `limit`."""
    used = state[1]
    for t in range(state[0], len(order)):
        i = order[t]
        s = size[i]
        if skip_empty and s == 0:
            continue
        f = first[i]
        la = last[i]
        b_first = f // width
        b_last = la // width
        # The placed records alive at some operator of [f, la]: those that started in an earlier
        # bucket and pass through the first one, if still alive at f; then those that started in
        # a bucket of [f, la], if they started by la and are alive at f (only the first bucket's
        # can have ended before f; each record is seen once, in the bucket where it started).
        # Both loops insert alike, written out twice: one loop over both kinds of list would cost
        # a lookup more per record met.
        k = 0
        e = passing[b_first]
        while e >= 0:
            j = who[e]
            if last[j] >= f:
                if k < _INSERTION:
                    o = offsets[j]
                    y = k
                    while y > 0 and offsets[found[y - 1]] < o:
                        found[y] = found[y - 1]
                        y -= 1
                    found[y] = j
                else:
                    found[k] = j
                k += 1
            e = nxt[e]
        for b in range(b_first, b_last + 1):
            j = starting[b]
            while j >= 0:
                if first[j] <= la and last[j] >= f:
                    if k < _INSERTION:
                        o = offsets[j]
                        y = k
                        while y > 0 and offsets[found[y - 1]] < o:
                            found[y] = found[y - 1]
                            y -= 1
                        found[y] = j
                    else:
                        found[k] = j
                    k += 1
                j = earlier[j]
        # Many found: all of them by a bottom-up merge sort through `spare` (decreasing offset).
        if k > _INSERTION:
            src, dst = found, spare
            in_spare = False
            run = 1
            while run < k:
                a = 0
                while a < k:
                    mid = min(a + run, k)
                    stop = min(a + 2 * run, k)
                    p, q, w = a, mid, a
                    while p < mid and q < stop:
                        if offsets[src[q]] > offsets[src[p]]:
                            dst[w] = src[q]
                            q += 1
                        else:
                            dst[w] = src[p]
                            p += 1
                        w += 1
                    while p < mid:
                        dst[w] = src[p]
                        p += 1
                        w += 1
                    while q < stop:
                        dst[w] = src[q]
                        q += 1
                        w += 1
                    a = stop
                src, dst = dst, src
                in_spare = not in_spare
                run *= 2
            if in_spare:
                for x in range(k):
                    found[x] = src[x]
        if fixed[i] >= 0:
            offset = fixed[i]
            for x in range(k):
                j = found[x]
                if s and offsets[j] < end_of[j] and offsets[j] < offset + s and offset < end_of[j]:
                    return i
        else:
            # The gap search (`_gaps.smallest_gap_offset` or `lowest_offset`), by increasing offset.
            best_start, best_gap, current = -1, 0, 0
            for x in range(k - 1, -1, -1):
                j = found[x]
                o = offsets[j]
                if o - current >= s:
                    start = -(-current // align) * align
                    if start + s <= o:
                        if not best_fit:
                            best_start = start
                            break
                        if best_start < 0 or o - start < best_gap:
                            best_start = start
                            best_gap = o - (current if remember_unaligned else start)
                if end_of[j] > current:
                    current = end_of[j]
            offset = best_start if best_start >= 0 else -(-current // align) * align
        offsets[i] = offset
        end_of[i] = offset + s
        earlier[i] = starting[b_first]
        starting[b_first] = i
        for b in range(b_first + 1, b_last + 1):
            who[used] = i
            nxt[used] = passing[b]
            passing[b] = used
            used += 1
        if limit >= 0 and watch[i] >= 0 and offset + watch[i] > limit:
            state[0] = t + 1
            state[1] = used
            return -2
    state[0] = len(order)
    state[1] = used
    return -1
