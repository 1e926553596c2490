"""The exact search's probe, the part that runs per node (a kernel: see `kernels`).

One probe is a depth-first search for a packing under one capacity (see exact_search.py for the
rules). It is written as plain Python over numpy arrays, so that the same source runs compiled
(`kernels.compiled(exact_probe)`) or uncompiled (this module as it is), with
identical results: nodes, offsets, everything. The recursion of the search (search -> decompose ->
sub-solve -> search) is an explicit stack of frames, which makes a probe resumable: it pauses
every 1,024 nodes when a safety-net deadline is set (the caller reads the clock: the node count
stays the only budget), and when a buffer is full (the caller grows it and resumes).

`exact_search` runs it uncompiled on small inputs until the search has taken PLAIN_STEPS steps
(see there), compiled from then on.
"""

from __future__ import annotations

import numpy as np

# What `run_probe` returns.
FOUND = 1  # a packing under the capacity: `solution` holds it
INFEASIBLE = 2  # the search is exhausted: nothing fits under the capacity
NODE_LIMIT = 3  # the next node would pass `node_limit`
PAUSED = 4  # at a node numbered 1 modulo 1,024 with `pause` set: read the clock, then resume
WORK_LIMIT = 5  # the next node would pass `work_limit` steps (see S_WORK)
GROW = 10  # GROW + b: buffer b (one of the *_BUFFER below) is full: grow it, then resume

# The buffers that grow, by index.
FRAME_BUFFER, MEMBER_BUFFER, PART_BUFFER, SAVE_BUFFER = range(4)

# Scalars of the probe's state (one int64 array), by index.
S_NODES = 0  # nodes entered so far
S_FRAMES = 1  # frames on the stack
S_MEMBERS = 2  # used length of the member buffer
S_PARTS = 3  # of the part buffer
S_SAVES = 4  # of the saved ranks
S_UNDO = 5  # of the raised minimum offsets to undo
S_RETURN = 6  # the last finished frame's answer (1: a packing of its part)
S_RESUMED = 7  # 1: the pause at this node was taken, go on
S_STAMP = 8  # the last stamp of `seen` (sections checked by one floor check)
# Steps taken so far: every record, section, neighbour and sort entry a node's loops go through.
# A node on a large input scans its part's records, so the steps, not the nodes, follow the CPU
# time; counted the same compiled or not, they make a budget that stays independent of the machine.
S_WORK = 9
STATE_SCALARS = 10

# Frames: one row of an int64 array each.
SEARCH, SPLIT = 0, 1  # kinds
ENTER, NEXT, AFTER = 0, 1, 2  # phases (a split's NEXT takes the next part, its AFTER awaits it)
F_KIND, F_PHASE, F_LO, F_HI, F_MEMBERS, F_COUNT = 0, 1, 2, 3, 4, 5
# a search: the last placement's offset and rank, its candidates, the record it placed last
F_LAST_OFFSET, F_LAST_RANK, F_CANDIDATE_COUNT, F_NEXT = 6, 7, 8, 9
F_RECORD, F_UNDO, F_HATLESS, F_CUT = 10, 11, 12, 13
# its candidates come in batches of up to BATCH, sorted (kept in the frame: a node holds BATCH
# records, not all its candidates, which on 100,000 records would make the stack quadratic):
# those below LIMIT, after the cursor (the last one batched), more to come or not
F_LIMIT, F_CURSOR_OFFSET, F_CURSOR_RANK, F_MORE = 14, 15, 16, 17
BATCH = 32
F_BATCH = 18
# a split: its parts, the ranks it saved, where its members start
F_PARTS, F_PART_COUNT, F_PART, F_SAVES, F_SAVE_COUNT, F_OWN_MEMBERS = 6, 7, 8, 9, 10, 11
FRAME_FIELDS = F_BATCH + BATCH

# The static preorder's keys (MiniMalloc's heuristics), larger first.
KEY_WIDTH, KEY_AREA, KEY_SECTION_TOTAL = 0, 1, 2


def _stable_sort_by(keys, items, count):
    """Sort items[:count] by keys[:count], ascending and stable (ties keep their order)."""
    if count <= 16:  # insertion sort: small lists are the common case
        for i in range(1, count):
            key, item = keys[i], items[i]
            j = i - 1
            while j >= 0 and keys[j] > key:
                keys[j + 1] = keys[j]
                items[j + 1] = items[j]
                j -= 1
            keys[j + 1] = key
            items[j + 1] = item
        return
    # bottom-up merge sort (numba's own sorts take seconds more to compile)
    spare_keys = np.empty(count, np.int64)
    spare_items = np.empty(count, np.int64)
    src_keys, src_items, dst_keys, dst_items = keys, items, spare_keys, spare_items
    width, in_spare = 1, False
    while width < count:
        for left in range(0, count, 2 * width):
            middle = min(left + width, count)
            right = min(left + 2 * width, count)
            a, b, out = left, middle, left
            while a < middle and b < right:
                if src_keys[b] < src_keys[a]:
                    dst_keys[out], dst_items[out] = src_keys[b], src_items[b]
                    b += 1
                else:
                    dst_keys[out], dst_items[out] = src_keys[a], src_items[a]
                    a += 1
                out += 1
            while a < middle:
                dst_keys[out], dst_items[out] = src_keys[a], src_items[a]
                a += 1
                out += 1
            while b < right:
                dst_keys[out], dst_items[out] = src_keys[b], src_items[b]
                b += 1
                out += 1
        src_keys, src_items, dst_keys, dst_items = dst_keys, dst_items, src_keys, src_items
        width, in_spare = 2 * width, not in_spare
    if in_spare:  # the sorted run ended in the spare arrays
        for i in range(count):
            keys[i], items[i] = src_keys[i], src_items[i]


def _preorder(members, start, count, heuristic, first, last, size, width, total, rank):
    """Reorder members[start:start+count] (ascending record numbers) into MiniMalloc's static
    preorder: by the heuristic's keys, larger first, then by record number; set their ranks.
    Returns the steps taken."""
    items = members[start:start + count].copy()
    keys = np.empty(count, np.int64)
    steps = count * (len(heuristic) + 1)
    for h in range(len(heuristic) - 1, -1, -1):  # least significant key first, stable sorts
        for p in range(count):
            k = items[p]
            if heuristic[h] == KEY_WIDTH:
                keys[p] = -width[k]
            elif heuristic[h] == KEY_AREA:
                keys[p] = -width[k] * size[k]
            else:
                most = 0
                for c in range(first[k], last[k] + 1):
                    most = max(most, total[c])
                steps += last[k] + 1 - first[k]
                keys[p] = -most
        _stable_sort_by(keys, items, count)
    for p in range(count):
        members[start + p] = items[p]
        rank[items[p]] = p
    return steps


def _floors_hold(k, undo_j, undo_from, undo_to, first, last, alive_ptr, alive_idx, offset,
                 min_offset, total, capacity, seen, stamp):
    """Section inference on the sections of record k (just placed) and of the records it raised:
    what is still to place in a section cannot start below the lowest minimum offset of its
    records, so that offset plus the bytes to place must fit under the capacity. Returns whether
    they hold, and the steps taken."""
    steps = 0
    for r in range(undo_from - 1, undo_to):
        j = k if r < undo_from else undo_j[r]
        steps += last[j] + 1 - first[j]
        for c in range(first[j], last[j] + 1):
            if seen[c] == stamp:
                continue
            seen[c] = stamp
            t = total[c]
            if t == 0:  # nothing left to place there
                continue
            room = capacity - t
            ok = False
            for a in range(alive_ptr[c], alive_ptr[c + 1]):
                steps += 1
                i = alive_idx[a]
                if offset[i] < 0 and min_offset[i] <= room:
                    ok = True
                    break
            if not ok:
                return False, steps
    return True, steps


def _next_batch(frame, members, offset, min_offset, rank, keys, items):
    """The frame's next batch of candidates: the unplaced members the search would try, in order
    of minimum offset then rank, after the cursor; dominance (below the lowest top an unplaced
    record could reach) and section inference (at most the room left) make LIMIT, the canonical
    order skips those below the last placement, or at it but earlier in the preorder. Returns the
    steps taken (members scanned, candidates sorted)."""
    base, count = frame[F_MEMBERS], frame[F_COUNT]
    limit, last_offset, last_rank = frame[F_LIMIT], frame[F_LAST_OFFSET], frame[F_LAST_RANK]
    cursor_offset, cursor_rank = frame[F_CURSOR_OFFSET], frame[F_CURSOR_RANK]
    n = 0
    for p in range(base, base + count):  # members are in rank order
        k = members[p]
        if offset[k] >= 0:
            continue
        at = min_offset[k]
        if at >= limit or at < last_offset or (at == last_offset and rank[k] < last_rank):
            continue
        if at < cursor_offset or (at == cursor_offset and rank[k] <= cursor_rank):
            continue  # batched before
        keys[n] = at
        items[n] = k
        n += 1
    _stable_sort_by(keys, items, n)
    taken = min(n, BATCH)
    for p in range(taken):
        frame[F_BATCH + p] = items[p]
    frame[F_CANDIDATE_COUNT], frame[F_NEXT], frame[F_MORE] = taken, 0, 1 if n > taken else 0
    if taken > 0:
        frame[F_CURSOR_OFFSET] = keys[taken - 1]
        frame[F_CURSOR_RANK] = rank[items[taken - 1]]
    return count + n


def run_probe(first, last, size, width, alive_ptr, alive_idx, nbr_ptr, nbr_idx, heuristic,
              capacity, alignment, node_limit, work_limit, pause,
              offset, solution, min_offset, total, cuts, rank, seen, state, frames,
              members, parts, saves, undo_j, undo_v, keys, items):
    """Run (or resume) one probe until it answers, reaches `node_limit` (nodes) or `work_limit`
    (steps, S_WORK), pauses or needs a bigger buffer; returns one of the codes above. The stack starts with the root split (set up by the
    caller, exact_search._Probe: a split of all sections over all records)."""
    while state[S_FRAMES] > 0:
        f = state[S_FRAMES] - 1
        frame = frames[f]
        lo, hi = frame[F_LO], frame[F_HI]
        if frame[F_KIND] == SEARCH:
            if frame[F_PHASE] == ENTER:
                node = state[S_NODES] + 1
                if node > node_limit:
                    return NODE_LIMIT
                if state[S_WORK] > work_limit:
                    return WORK_LIMIT
                if pause and node & 1023 == 1 and state[S_RESUMED] == 0:
                    state[S_RESUMED] = 1
                    return PAUSED
                state[S_RESUMED] = 0
                state[S_NODES] = node
                base, count = frame[F_MEMBERS], frame[F_COUNT]
                lowest_top = -1
                for p in range(base, base + count):
                    k = members[p]
                    if offset[k] < 0:
                        if lowest_top < 0 or min_offset[k] + size[k] < lowest_top:
                            lowest_top = min_offset[k] + size[k]
                if lowest_top < 0:  # everything placed
                    state[S_RETURN] = 1
                    state[S_FRAMES] = f
                    continue
                most = 0
                for c in range(lo, hi):
                    most = max(most, total[c])
                state[S_WORK] += count + hi - lo
                # a candidate sits below the lowest top (dominance) and at most at the room left
                # (section inference)
                frame[F_LIMIT] = min(lowest_top, capacity - most + 1)
                frame[F_CURSOR_OFFSET], frame[F_CURSOR_RANK] = -1, -1
                state[S_WORK] += _next_batch(frame, members, offset, min_offset, rank, keys, items)
                frame[F_PHASE] = NEXT
                continue
            if frame[F_PHASE] == NEXT:
                if f + 2 > len(frames):
                    return GROW + FRAME_BUFFER
                if frame[F_NEXT] == frame[F_CANDIDATE_COUNT] and frame[F_MORE] == 1:
                    state[S_WORK] += _next_batch(frame, members, offset, min_offset, rank, keys, items)
                if frame[F_NEXT] == frame[F_CANDIDATE_COUNT]:
                    state[S_RETURN] = 0
                    state[S_FRAMES] = f
                    continue
                k = frame[F_BATCH + frame[F_NEXT]]
                frame[F_NEXT] += 1
                at = min_offset[k]
                offset[k] = at
                solution[k] = at
                # Raise the minimum offsets of the unplaced neighbours.
                undo_from = state[S_UNDO]
                u = undo_from
                hatless = True
                above = at + size[k]
                if alignment > 1:
                    above = -(-above // alignment) * alignment
                for a in range(nbr_ptr[k], nbr_ptr[k + 1]):
                    j = nbr_idx[a]
                    if offset[j] >= 0:
                        continue
                    hatless = False
                    if min_offset[j] < above:
                        undo_j[u] = j
                        undo_v[u] = min_offset[j]
                        u += 1
                        min_offset[j] = above
                state[S_UNDO] = u
                s = size[k]  # its sections have s bytes less to place
                for c in range(first[k], last[k] + 1):
                    total[c] -= s
                state[S_WORK] += nbr_ptr[k + 1] - nbr_ptr[k] + last[k] + 1 - first[k]
                frame[F_RECORD], frame[F_UNDO], frame[F_HATLESS] = k, undo_from, 1 if hatless else 0
                frame[F_PHASE] = AFTER
                feasible = hatless
                if not feasible:
                    state[S_STAMP] += 1
                    feasible, steps = _floors_hold(k, undo_j, undo_from, u, first, last, alive_ptr,
                                                   alive_idx, offset, min_offset, total, capacity,
                                                   seen, state[S_STAMP])
                    state[S_WORK] += steps
                if not feasible:
                    frame[F_CUT] = 0
                    state[S_RETURN] = 0
                    continue
                # Go on below the placement; split the sections nothing unplaced connects.
                frame[F_CUT] = 1
                split = False
                for c in range(first[k], last[k]):
                    cuts[c] -= 1
                    if cuts[c] == 0 and lo <= c < hi - 1:
                        split = True
                child = frames[f + 1]
                child[F_PHASE] = ENTER
                child[F_LO], child[F_HI] = lo, hi
                child[F_MEMBERS], child[F_COUNT] = frame[F_MEMBERS], frame[F_COUNT]
                if split:
                    child[F_KIND] = SPLIT
                else:
                    child[F_KIND] = SEARCH
                    child[F_LAST_OFFSET], child[F_LAST_RANK] = at, rank[k]
                state[S_FRAMES] = f + 2
                continue
            # AFTER: take the placement back
            k = frame[F_RECORD]
            if frame[F_CUT] == 1:
                for c in range(first[k], last[k]):
                    cuts[c] += 1
            s = size[k]
            for c in range(first[k], last[k] + 1):
                total[c] += s
            undo_from = frame[F_UNDO]
            for r in range(state[S_UNDO] - 1, undo_from - 1, -1):
                min_offset[undo_j[r]] = undo_v[r]
            state[S_WORK] += last[k] + 1 - first[k] + state[S_UNDO] - undo_from
            state[S_UNDO] = undo_from
            offset[k] = -1
            if state[S_RETURN] == 1 or frame[F_HATLESS] == 1:
                # found (the answer stays 1), or a record with nothing beside it: no other
                # choice here does better (the answer stays 0)
                state[S_FRAMES] = f
                continue
            frame[F_PHASE] = NEXT
            continue
        # SPLIT: the parts of [lo, hi) that no unplaced record connects, solved one after another
        if frame[F_PHASE] == ENTER:
            count = frame[F_COUNT]
            most_parts = max(1, hi - lo)
            if state[S_PARTS] + 4 * most_parts > len(parts):
                return GROW + PART_BUFFER
            if state[S_MEMBERS] + count > len(members):
                return GROW + MEMBER_BUFFER
            if state[S_SAVES] + 2 * count > len(saves):
                return GROW + SAVE_BUFFER
            part0 = state[S_PARTS]
            n_parts = 0
            begin = lo
            for c in range(lo, hi - 1):
                if cuts[c] == 0:
                    parts[part0 + 4 * n_parts] = begin
                    parts[part0 + 4 * n_parts + 1] = c + 1
                    n_parts += 1
                    begin = c + 1
            parts[part0 + 4 * n_parts] = begin
            parts[part0 + 4 * n_parts + 1] = hi
            n_parts += 1
            # The unplaced members in ascending record number, each in its part (none crosses
            # a part's boundary: that is what makes them parts).
            base = frame[F_MEMBERS]
            mine = np.empty(count, np.int64)
            m = 0
            for p in range(base, base + count):
                if offset[members[p]] < 0:
                    mine[m] = members[p]
                    m += 1
            ordered = mine[:m].copy()
            _stable_sort_by(ordered, mine, m)  # ascending record numbers
            where = np.zeros(n_parts + 1, np.int64)
            home = np.empty(m, np.int64)
            for p in range(m):
                at = first[mine[p]]
                lo_part, hi_part = 0, n_parts - 1  # the last part starting at or before `at`
                while lo_part < hi_part:
                    mid = (lo_part + hi_part + 1) // 2
                    if parts[part0 + 4 * mid] <= at:
                        lo_part = mid
                    else:
                        hi_part = mid - 1
                home[p] = lo_part
                where[lo_part + 1] += 1
            for q in range(n_parts):
                where[q + 1] += where[q]
            mem0 = state[S_MEMBERS]
            for q in range(n_parts):
                parts[part0 + 4 * q + 2] = mem0 + where[q]
                parts[part0 + 4 * q + 3] = where[q + 1] - where[q]
            for p in range(m):
                q = home[p]
                members[mem0 + where[q]] = mine[p]
                where[q] += 1
            save0 = state[S_SAVES]
            for p in range(m):
                saves[save0 + 2 * p] = mine[p]
                saves[save0 + 2 * p + 1] = rank[mine[p]]
            state[S_WORK] += count + hi - lo + m
            state[S_PARTS] = part0 + 4 * n_parts
            state[S_MEMBERS] = mem0 + m
            state[S_SAVES] = save0 + 2 * m
            frame[F_PARTS], frame[F_PART_COUNT], frame[F_PART] = part0, n_parts, 0
            frame[F_SAVES], frame[F_SAVE_COUNT], frame[F_OWN_MEMBERS] = save0, m, mem0
            frame[F_PHASE] = NEXT
            continue
        if frame[F_PHASE] == AFTER and state[S_RETURN] == 0:
            done = True
        elif frame[F_PART] == frame[F_PART_COUNT]:
            done = True
            state[S_RETURN] = 1
        else:
            done = False
        if done:  # give the ranks back, free the part's buffers
            save0 = frame[F_SAVES]
            for p in range(frame[F_SAVE_COUNT]):
                rank[saves[save0 + 2 * p]] = saves[save0 + 2 * p + 1]
            state[S_SAVES] = save0
            state[S_PARTS] = frame[F_PARTS]
            state[S_MEMBERS] = frame[F_OWN_MEMBERS]
            state[S_FRAMES] = f
            continue
        if f + 2 > len(frames):
            return GROW + FRAME_BUFFER
        q = frame[F_PART]
        frame[F_PART] = q + 1
        a, b = parts[frame[F_PARTS] + 4 * q], parts[frame[F_PARTS] + 4 * q + 1]
        start, count = parts[frame[F_PARTS] + 4 * q + 2], parts[frame[F_PARTS] + 4 * q + 3]
        if count == 0:  # nothing to place there
            frame[F_PHASE] = NEXT
            continue
        state[S_WORK] += _preorder(members, start, count, heuristic, first, last, size, width, total, rank)
        child = frames[f + 1]
        child[F_KIND], child[F_PHASE] = SEARCH, ENTER
        child[F_LO], child[F_HI], child[F_MEMBERS], child[F_COUNT] = a, b, start, count
        child[F_LAST_OFFSET], child[F_LAST_RANK] = 0, -1
        frame[F_PHASE] = AFTER
        state[S_FRAMES] = f + 2
    return FOUND if state[S_RETURN] == 1 else INFEASIBLE


def neighbour_rows(order, ends_before, n):
    """Compressed rows of neighbours (records alive at a common step), each row ascending.
    `order` lists the records by first step; ends_before[a] is the rank in that order of the first
    record starting after order[a] ends, so order[a] meets exactly the ranks between a and it (and
    those before a that reach it). Two passes over the pairs: count, then fill; then each row is
    sorted. Returns (row pointers, neighbours)."""
    degree = np.zeros(n + 1, np.int64)
    for a in range(n):
        i = order[a]
        degree[i + 1] += ends_before[a] - a - 1
        for b in range(a + 1, ends_before[a]):
            degree[order[b] + 1] += 1
    ptr = np.zeros(n + 1, np.int64)
    for i in range(n):
        ptr[i + 1] = ptr[i] + degree[i + 1]
    rows = np.empty(ptr[n], np.int64)
    fill = ptr[:n].copy()
    for a in range(n):
        i = order[a]
        for b in range(a + 1, ends_before[a]):
            j = order[b]
            rows[fill[i]] = j
            fill[i] += 1
            rows[fill[j]] = i
            fill[j] += 1
    most = 0
    for i in range(n):
        most = max(most, ptr[i + 1] - ptr[i])
    spare = np.empty(most, np.int64)
    for i in range(n):
        count = ptr[i + 1] - ptr[i]
        if count > 1:
            _stable_sort_by(rows[ptr[i]:ptr[i + 1]], spare, count)
    return ptr, rows
