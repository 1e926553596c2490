"""The placement loop the greedy offset strategies share, as one plain function over flat
sequences, so that the same source runs as Python (lists; any integers) or compiled by numba
(int64 arrays; see `_compiled.py`) with identical offsets.

Records are placed one by one in a given order, each in the best-fit (or the lowest) gap among
the conflicting records placed before it (see `_gaps.place_in_order` for the rules). The placed
records are kept in buckets of `width` operators (a record in every bucket its interval touches;
`_gaps._bucket_width` chooses the width), each bucket a linked list; a query collects the records of the
buckets it touches, each once, and sorts them by offset. Equal offsets need no further order:
the gap walk gives the same answer whichever comes first.

Everything is one function without calls to helpers: numba compiles only functions it is given,
and the uncompiled run must be the very same code.
"""

from __future__ import annotations

# Below this many conflicting records, the found records are sorted by insertion.
_INSERTION = 24


def place(first, last, size, order, fixed, align, best_fit, remember_unaligned, skip_empty,
          width, head, nxt, who, start_of, end_of, found, spare, offsets, watch, limit, state):
    """Offsets into `offsets` for the records in `order` (positions). `size` holds the sizes to
    place (rounded already where the runtime rounds); `fixed[i]` >= 0 places record i at that
    offset (checked against the records placed before it); `align` aligns the gap starts;
    `best_fit` takes the smallest gap (the first of equal ones) instead of the lowest;
    `remember_unaligned` keeps TFLite's way of remembering the best gap; `skip_empty` leaves
    empty records at 0 and out of the buckets. Buffers: `head` (one per bucket, all -1), `nxt`
    and `who` (one per bucket entry), `start_of`/`end_of`/`found`/`spare` (one per record).
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
        # The placed records alive at some operator of [f, la]: in the first bucket, those that
        # overlap; in a later one, those that started in it (the others were seen before).
        k = 0
        e = head[b_first]
        while e >= 0:
            j = who[e]
            if first[j] <= la and last[j] >= f:
                found[k] = j
                k += 1
            e = nxt[e]
        for b in range(b_first + 1, b_last + 1):
            lo = b * width
            e = head[b]
            while e >= 0:
                j = who[e]
                if lo <= first[j] and first[j] <= la:
                    found[k] = j
                    k += 1
                e = nxt[e]
        # By increasing offset: insertion for a few, else a bottom-up merge sort through `spare`.
        if k <= _INSERTION:
            for x in range(1, k):
                j = found[x]
                key = start_of[j]
                y = x - 1
                while y >= 0 and start_of[found[y]] > key:
                    found[y + 1] = found[y]
                    y -= 1
                found[y + 1] = j
        else:
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
                        if start_of[src[q]] < start_of[src[p]]:
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
                if s and start_of[j] < end_of[j] and start_of[j] < offset + s and offset < end_of[j]:
                    return i
        else:
            # The gap search (`_gaps.smallest_gap_offset` or `lowest_offset`).
            best_start, best_gap, current = -1, 0, 0
            for x in range(k):
                j = found[x]
                o = start_of[j]
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
        start_of[i] = offset
        end_of[i] = offset + s
        for b in range(b_first, b_last + 1):
            who[used] = i
            nxt[used] = head[b]
            head[b] = used
            used += 1
        if limit >= 0 and watch[i] >= 0 and offset + watch[i] > limit:
            state[0] = t + 1
            state[1] = used
            return -2
    state[0] = len(order)
    state[1] = used
    return -1
