"""The exact search's second probe: fill the lowest point of the skyline (a kernel: see `kernels`).

The first probe (`exact_probe`, MiniMalloc's rules) branches on which record is placed next at
the lowest offset anywhere. This one branches on a *point*: every section (span of time between
interval ends) has a floor, the top of what is placed or wasted there; the lowest floor h is
found, and among the sections at h the one with the fewest records that could cover the point
(section, h) is taken (the fewest choices first, as exact-cover searches do). Either a record
alive there sits on h (its whole span has its floor at h: h is the lowest floor, so nothing can
sit lower), or the point stays empty: that section's floor rises to the lowest offset any record
alive there could still take, at most as far as the section's slack (the capacity minus its floor
and the bytes still to place there) allows. So a section without slack must be covered at once,
and a point no record can cover in a section without slack fails the node at once: on packings
with little waste (a perfect packing has none: every section is full) the branching is small
where the first probe, choosing among every record at the lowest offset, explores the orders of
independent sections.

Wells: a run of sections at one floor walled on both sides (a higher floor, a full section or the
end of the part) can only be floored by records whose spans lie inside it. Where none of its
sections has slack, (1) the spans of the records that can sit on its floor must tile the run end
to end (a dynamic program over its sections; if they cannot, the node fails), and (2) its points
are choices like those of the lowest floor: a well higher up with fewer candidates is filled
first, so a forced record is placed (or a dead end found) before the lowest floor's choices
multiply. Both only cut what cannot be completed: on the perfect packings of
benchmarks/perfect_packing.py they took most of those the lowest floor alone left open within
its share to a few nodes per record (docs/strategies.md).

A point's candidates are tried in a static order (`order_rank`), or with `fit` first those whose
top would meet the floor of the section beside them (`_key`): the order changes the path, never
the answer. The search runs both on instances full at the capacity (`offsets/_tiling.py`).

Backjumping (`jump`, on where every section is full at the capacity, so nothing is ever left
empty and every section's placed records fill it from 0 to its floor): every dead end comes with
a window, the placed records that explain it: no packing keeps them all (an untileable well: the
records placed in its run, and at each wall an unplaced record of the run reaches over, the one
across the run's floor; a point nothing can cover: the records placed in its section, and the
one across its floor at each wall of the run of sections at or below it that an unplaced record
alive there reaches over; a record that no longer fits: the records placed in the section of its
span with the highest floor). A point whose choices are all tried fails with its children's
windows and its own point's. Backing up, a point whose placed record is not in the window below
it fails at once with that window: the same dead end follows whatever the point holds, so its
other choices are not tried (conflict-directed backjumping). A window names records, not
sections: a wall's records above the floor in question, or a record placed between a point and
its walls, are not in it, so the search jumps past them.

Complete: a packing pushed down into canonical form (every record rests on another or on 0,
offsets multiples of the granule) is reached. Twins (records with the same span and size) are
placed in record order only. The search is an explicit stack of frames, resumable like the first
probe's; every node and every step (sections, records, spans scanned) is counted, so its budget
is work, never time.
"""

from __future__ import annotations

# What `run_tiling` returns (the same codes as exact_probe's).
FOUND = 1
INFEASIBLE = 2
NODE_LIMIT = 3
WORK_LIMIT = 5
GROW = 10  # GROW + b: buffer b is full: grow it, then resume
FRAME_BUFFER, CANDIDATE_BUFFER, PART_BUFFER = 0, 1, 2

# Scalars of the state, by index.
T_NODES, T_DEPTH, T_CANDIDATES, T_WORK, T_ANSWER, T_PARTS = 0, 1, 2, 3, 4, 5
TILING_SCALARS = 6
# (with `jump`) a failure's window, the placed records that explain it, is a set of records: a
# bit per record, WINDOW_BITS to an int64 word (a frame's row of `windows`, or the failure passed
# up in `failed`)
WINDOW_BITS = 32

# A frame: a search over the sections [lo, hi), or a split of them into parts no unplaced record
# connects (solved one after another: a part that fails fails them all, a part solved is never
# revisited, since nothing it does reaches another).
SEARCH, SPLIT = 0, 1
ENTER, TRY, AFTER = 0, 1, 2
G_KIND, G_PHASE, G_LO, G_HI = 0, 1, 2, 3
# a search: the point (section, floor) it fills, its candidates (in the candidate buffer), the
# next one to try, the raise of its floor if left empty (0: none), what it did last (a record
# placed; -1: the floor raised; -2: nothing)
G_SECTION, G_FLOOR, G_FROM, G_COUNT, G_NEXT, G_RAISE, G_DONE = 4, 5, 6, 7, 8, 9, 10
# a split: its parts (pairs in the part buffer), how many, the next one
G_PARTS, G_PART_COUNT, G_PART = 4, 5, 6
FRAME_WIDTH = 11


def _clear(bits):
    for w in range(len(bits)):
        bits[w] = 0


def _holds(bits, j):
    return (bits[j // WINDOW_BITS] >> (j % WINDOW_BITS)) & 1 == 1


def _mark_stack(bits, c, offset, alive_ptr, alive_idx):
    """Adds the records placed in section c (its stack, from 0 to its floor) to a window; returns
    the steps."""
    for q in range(alive_ptr[c], alive_ptr[c + 1]):
        j = alive_idx[q]
        if offset[j] >= 0:
            bits[j // WINDOW_BITS] |= 1 << (j % WINDOW_BITS)
    return alive_ptr[c + 1] - alive_ptr[c]


def _mark_wall(bits, d, f, offset, size, alive_ptr, alive_idx):
    """Adds the record placed in section d across height f to a window: what keeps a record
    sitting on f from reaching over d (the rest of d's stack does not matter). Returns the steps."""
    for q in range(alive_ptr[d], alive_ptr[d + 1]):
        j = alive_idx[q]
        if offset[j] >= 0 and offset[j] <= f < offset[j] + size[j]:
            bits[j // WINDOW_BITS] |= 1 << (j % WINDOW_BITS)
            return q - alive_ptr[d] + 1
    # none (a floor raised over empty room: not where `jump` is on): its whole stack
    return _mark_stack(bits, d, offset, alive_ptr, alive_idx) + alive_ptr[d + 1] - alive_ptr[d]


def _count_window(conflicts, bits):
    """Adds 1 to the count of every record in a dead end's window (the learning restarts of
    offsets/_tiling.TilingRestarts order their fresh searches by these counts). Returns the steps."""
    steps = len(bits)
    for w in range(len(bits)):
        x = bits[w]
        j = w * WINDOW_BITS
        while x != 0:
            if x & 1:
                conflicts[j] += 1
                steps += 1
            x >>= 1
            j += 1
    return steps


def _union(into, bits):
    for w in range(len(into)):
        into[w] |= bits[w]


def _untileable_well(lo, hi, floor, remaining, first, last, size, offset, alive_ptr, alive_idx,
                     capacity, granule, reach, walled):
    """Whether some well cannot be floored: a run of sections [a, b] at one floor f, walled on
    both sides (a higher floor, a full section, or the end of the part), none with slack. A
    record sitting on f there has its span inside the run (the walls are higher), and no point
    of the run may stay empty, so the spans of the records that can sit on f must tile [a, b]
    end to end; a dynamic program over the run's sections says whether they can. Returns
    (dead end, steps, the dead run's window: the run and its walls); `walled[c]` says whether
    section c's run is walled."""
    steps = 0
    a = lo
    while a < hi:
        if remaining[a] == 0:
            a += 1
            continue
        f = floor[a]
        b = a
        while b + 1 < hi and remaining[b + 1] > 0 and floor[b + 1] == f:
            b += 1
        wall = ((a == lo or remaining[a - 1] == 0 or floor[a - 1] > f)
                and (b == hi - 1 or remaining[b + 1] == 0 or floor[b + 1] > f))
        for c in range(a, b + 1):
            walled[c] = wall
        tight = True
        for c in range(a, b + 1):
            if capacity - f - remaining[c] >= granule:
                tight = False
                break
        steps += b - a + 1
        if wall and tight:
            for c in range(a, b + 2):
                reach[c] = 0
            reach[a] = 1
            for c in range(a, b + 1):
                if reach[c] == 0:
                    continue
                for q in range(alive_ptr[c], alive_ptr[c + 1]):
                    j = alive_idx[q]
                    if offset[j] < 0 and first[j] == c and last[j] <= b and f + size[j] <= capacity:
                        reach[last[j] + 1] = 1
                steps += alive_ptr[c + 1] - alive_ptr[c]
            if reach[b + 1] == 0:
                return True, steps, a - 1, b + 1
        a = b + 1
    return False, steps, 0, -1


def _reaching(c, a, b, first, last, offset, alive_ptr, alive_idx):
    """Whether an unplaced record alive at section c reaches left of a, and right of b."""
    left = right = False
    for q in range(alive_ptr[c], alive_ptr[c + 1]):
        j = alive_idx[q]
        if offset[j] < 0:
            left = left or first[j] < a
            right = right or last[j] > b
    return left, right


def _point_window(c, f, lo, hi, floor, remaining, first, last, offset, size, alive_ptr,
                  alive_idx, bits):
    """Why no record but the candidates can cover the point (c, f) (`jump`), added to `bits`:
    the records placed in section c (they make its floor f: below is full), and at each wall of
    the run of sections around c with floors at most f (a higher floor or a full section) that an
    unplaced record alive at c reaches, the record placed across f. An unplaced record alive at
    c that is no candidate reaches over a wall, where that record blocks f. So no packing that
    keeps these records covers (c, f) with a record that is not a candidate, whatever else is
    placed (a record placed later is placed in no section these records are). Returns the
    steps."""
    a, b = c, c
    while a > lo and remaining[a - 1] > 0 and floor[a - 1] <= f:
        a -= 1
    while b + 1 < hi and remaining[b + 1] > 0 and floor[b + 1] <= f:
        b += 1
    steps = b - a + 1 + _mark_stack(bits, c, offset, alive_ptr, alive_idx)
    left, right = _reaching(c, a, b, first, last, offset, alive_ptr, alive_idx)
    steps += alive_ptr[c + 1] - alive_ptr[c]
    if left:
        steps += _mark_wall(bits, a - 1, f, offset, size, alive_ptr, alive_idx)
    if right:
        steps += _mark_wall(bits, b + 1, f, offset, size, alive_ptr, alive_idx)
    return steps


def _well_window(a, b, floor, first, last, offset, size, alive_ptr, alive_idx, bits):
    """Why the well [a, b] cannot be floored (`jump`), added to `bits`: the records placed in its
    sections (they make its floor, and leave the records that could tile it unplaced), and at
    each wall an unplaced record of the run reaches over, the record placed across its floor (a
    wall nothing reaches over keeps out nothing). Returns the steps."""
    steps = 0
    for d in range(a, b + 1):
        steps += _mark_stack(bits, d, offset, alive_ptr, alive_idx)
    f = floor[a]
    left = _reaching(a, a, b, first, last, offset, alive_ptr, alive_idx)[0]
    right = _reaching(b, a, b, first, last, offset, alive_ptr, alive_idx)[1]
    steps += alive_ptr[a + 1] - alive_ptr[a] + alive_ptr[b + 1] - alive_ptr[b]
    if left:
        steps += _mark_wall(bits, a - 1, f, offset, size, alive_ptr, alive_idx)
    if right:
        steps += _mark_wall(bits, b + 1, f, offset, size, alive_ptr, alive_idx)
    return steps


def _choice(lo, hi, floor, remaining, first, last, size, offset, twin, alive_ptr, alive_idx,
            capacity, granule, top, stamp, node, reach, walled, jump, tie, failed):
    """The point to fill among the sections [lo, hi): (section, floor, how far its floor may rise
    if left empty (0: not at all), candidates, steps). section -1: everything there is placed;
    -2: a dead end: a record that can no longer fit under the capacity, or a section without
    slack whose floor no record can cover (every record left there reaches over a higher floor:
    the point would stay empty for ever); with `jump`, `failed` is then its window: the placed
    records that explain it."""
    steps = hi - lo
    h = -1
    for c in range(lo, hi):
        if remaining[c] > 0 and (h < 0 or floor[c] < h):
            h = floor[c]
    if h < 0:
        return -1, 0, 0, 0, steps
    dead, more, wlo, whi = _untileable_well(lo, hi, floor, remaining, first, last, size, offset,
                                            alive_ptr, alive_idx, capacity, granule, reach, walled)
    steps += more
    if dead:
        if jump == 1:
            _clear(failed)
            steps += len(failed) + _well_window(wlo + 1, whi - 1, floor, first, last, offset, size,
                                                alive_ptr, alive_idx, failed)
        return -2, h, 0, 0, steps
    # every unplaced record's lowest offset: the highest floor over its span
    for c in range(lo, hi):
        if remaining[c] == 0:
            continue
        f = floor[c]
        for a in range(alive_ptr[c], alive_ptr[c + 1]):
            j = alive_idx[a]
            if offset[j] >= 0:
                continue
            if stamp[j] != node:
                stamp[j] = node
                top[j] = f
            elif f > top[j]:
                top[j] = f
        steps += alive_ptr[c + 1] - alive_ptr[c]
    best, best_count, best_raise, best_floor = -2, -1, 0, h
    for c in range(lo, hi):
        if remaining[c] == 0:
            continue
        f = floor[c]
        count = 0
        covered = False
        rise = -1  # (lowest sections) the lowest offset above h a record alive here could take
        for a in range(alive_ptr[c], alive_ptr[c + 1]):
            j = alive_idx[a]
            if offset[j] >= 0:
                continue
            if top[j] + size[j] > capacity:
                if jump == 1:  # a section of its span whose floor leaves it no room
                    _clear(failed)
                    d = first[j]
                    while floor[d] != top[j]:
                        d += 1
                    steps += len(failed) + d - first[j] + _mark_stack(failed, d, offset, alive_ptr,
                                                                       alive_idx)
                return -2, h, 0, 0, steps
            if top[j] == f:
                covered = True
                if twin[j] < 0 or offset[twin[j]] >= 0:
                    count += 1
            if f == h:
                above = max(top[j], h + granule)
                if rise < 0 or above < rise:
                    rise = above
        steps += alive_ptr[c + 1] - alive_ptr[c]
        slack = capacity - f - remaining[c]
        if not covered and slack < granule:
            if jump == 1:
                _clear(failed)
                steps += len(failed) + _point_window(c, f, lo, hi, floor, remaining, first, last,
                                                     offset, size, alive_ptr, alive_idx, failed)
            return -2, h, 0, 0, steps
        if f != h:
            # above the lowest floor, a point that must be covered (no slack, walled: only a
            # record inside the well can sit on it) is a choice too
            if slack < granule and walled[c] == 1 and (
                    best_count < 0 or count < best_count or (count == best_count and tie[c] < tie[best])):
                best, best_count, best_raise, best_floor = c, count, 0, f
            continue
        raise_to = 0
        if rise > h and rise - h <= slack:
            raise_to = rise
        if count == 0 and raise_to == 0:  # (only with slack: never where `jump` is on)
            if jump == 1:
                _clear(failed)
                for d in range(lo, hi):
                    steps += _mark_stack(failed, d, offset, alive_ptr, alive_idx)
            return -2, h, 0, 0, steps
        # the fewest choices first (a raise counts as one)
        choices = count + (1 if raise_to > 0 else 0)
        if best_count < 0 or choices < best_count or (choices == best_count and tie[c] < tie[best]):
            best, best_count, best_raise, best_floor = c, choices, raise_to, h
    return best, best_floor, best_raise, best_count, steps


def _key(j, h, lo, hi, floor, first, last, size, order_rank, fit):
    """A candidate's place among those of its point: its rank, or with `fit`, first the records
    whose top would meet the floor of the section beside them on both sides (or the end of the
    part), then on one side, then the rest, each by rank."""
    if fit == 0:
        return order_rank[j]
    top = h + size[j]
    sides = 0
    if first[j] == lo or floor[first[j] - 1] == top:
        sides += 1
    if last[j] == hi - 1 or floor[last[j] + 1] == top:
        sides += 1
    return (2 - sides) * len(size) + order_rank[j]


def _place(k, at, first, last, size, floor, remaining, cuts, offset, solution):
    offset[k] = at
    solution[k] = at
    s = size[k]
    for d in range(first[k], last[k] + 1):
        floor[d] += s
        remaining[d] -= s
    for d in range(first[k], last[k]):
        cuts[d] -= 1


def _unplace(k, first, last, size, floor, remaining, cuts, offset):
    offset[k] = -1
    s = size[k]
    for d in range(first[k], last[k] + 1):
        floor[d] -= s
        remaining[d] += s
    for d in range(first[k], last[k]):
        cuts[d] += 1


def run_tiling(first, last, size, order_rank, fit, jump, tie, twin, alive_ptr, alive_idx, capacity,
               granule, node_limit, work_limit, floor, remaining, cuts, offset, solution, state,
               frames, candidates, parts, top, stamp, reach, walled, windows, failed, conflicts):
    """Run (or resume) the search until it answers, reaches `node_limit` nodes or `work_limit`
    steps, or needs a bigger buffer; returns one of the codes above (FOUND: `solution` holds the
    packing). The caller sets floor to 0, remaining to the bytes alive per section, cuts to the
    records crossing each boundary, offset to -1, and the root frame: a search of every section.
    `windows` has a row per frame (a row as long as `failed`: a bit per record). `conflicts`,
    where it is not empty (with `jump`), counts per record the dead ends whose window held it."""
    while state[T_DEPTH] > 0:
        f = state[T_DEPTH] - 1
        frame = frames[f]
        lo, hi = frame[G_LO], frame[G_HI]
        if frame[G_KIND] == SEARCH and frame[G_PHASE] == ENTER:
            if state[T_NODES] + 1 > node_limit:
                return NODE_LIMIT
            if state[T_WORK] > work_limit:
                return WORK_LIMIT
            if state[T_CANDIDATES] + len(size) > len(candidates):
                return GROW + CANDIDATE_BUFFER
            if state[T_PARTS] + 2 * (hi - lo) > len(parts):
                return GROW + PART_BUFFER
            state[T_NODES] += 1
            # parts no unplaced record connects: split
            p0 = state[T_PARTS]
            n_parts = 0
            begin = lo
            busy = False
            for c in range(lo, hi):
                busy = busy or remaining[c] > 0
                if c == hi - 1 or cuts[c] == 0:
                    if busy:
                        parts[p0 + 2 * n_parts] = begin
                        parts[p0 + 2 * n_parts + 1] = c + 1
                        n_parts += 1
                    begin = c + 1
                    busy = False
            state[T_WORK] += hi - lo
            if n_parts == 0:  # everything here placed
                state[T_ANSWER] = 1
                state[T_DEPTH] = f
                continue
            if n_parts > 1 or parts[p0] != lo or parts[p0 + 1] != hi:
                if n_parts > 1:
                    state[T_PARTS] = p0 + 2 * n_parts
                    frame[G_KIND], frame[G_PHASE] = SPLIT, AFTER
                    frame[G_PARTS], frame[G_PART_COUNT], frame[G_PART] = p0, n_parts, 0
                    state[T_ANSWER] = 1
                    continue
                lo, hi = parts[p0], parts[p0 + 1]  # one part: narrow the search to it
                frame[G_LO], frame[G_HI] = lo, hi
            c, h, raise_to, count, steps = _choice(
                lo, hi, floor, remaining, first, last, size, offset, twin, alive_ptr, alive_idx,
                capacity, granule, top, stamp, state[T_NODES], reach, walled, jump, tie, failed)
            state[T_WORK] += steps
            if c == -1:
                state[T_ANSWER] = 1
                state[T_DEPTH] = f
                continue
            if c == -2:  # a dead end (its window in `failed`): back up
                if len(conflicts) > 0:
                    state[T_WORK] += _count_window(conflicts, failed)
                state[T_ANSWER] = 0
                state[T_DEPTH] = f
                continue
            # the candidates of the chosen point, in the static order
            start = state[T_CANDIDATES]
            n = 0
            for a in range(alive_ptr[c], alive_ptr[c + 1]):
                j = alive_idx[a]
                if offset[j] >= 0 or h + size[j] > capacity or (twin[j] >= 0 and offset[twin[j]] < 0):
                    continue
                flat = True
                for d in range(first[j], last[j] + 1):
                    if floor[d] != h:
                        flat = False
                        break
                if flat:
                    p = start + n  # insertion by key (few candidates)
                    key = _key(j, h, lo, hi, floor, first, last, size, order_rank, fit)
                    while p > start and _key(candidates[p - 1], h, lo, hi, floor, first, last, size,
                                             order_rank, fit) > key:
                        candidates[p] = candidates[p - 1]
                        p -= 1
                    candidates[p] = j
                    n += 1
            state[T_WORK] += alive_ptr[c + 1] - alive_ptr[c] + n
            state[T_CANDIDATES] = start + n
            frame[G_SECTION], frame[G_FLOOR], frame[G_FROM], frame[G_COUNT] = c, h, start, n
            frame[G_NEXT], frame[G_RAISE], frame[G_DONE] = 0, raise_to, -2
            if jump == 1:
                _clear(windows[f])
                state[T_WORK] += len(failed)
            frame[G_PHASE] = TRY
            continue
        if f + 2 > len(frames):
            return GROW + FRAME_BUFFER
        if frame[G_KIND] == SPLIT:
            # AFTER a part (or at the start): the next part, or the answer
            q = frame[G_PART]
            if state[T_ANSWER] == 0 or q == frame[G_PART_COUNT]:
                state[T_PARTS] = frame[G_PARTS]
                state[T_DEPTH] = f
                continue
            frame[G_PART] = q + 1
            child = frames[f + 1]
            child[G_KIND], child[G_PHASE] = SEARCH, ENTER
            child[G_LO], child[G_HI] = parts[frame[G_PARTS] + 2 * q], parts[frame[G_PARTS] + 2 * q + 1]
            state[T_DEPTH] = f + 2
            continue
        # a search's TRY: take back what it did last; answered, pass the answer up
        c, h = frame[G_SECTION], frame[G_FLOOR]
        done = frame[G_DONE]
        if done >= 0:
            _unplace(done, first, last, size, floor, remaining, cuts, offset)
            state[T_WORK] += 1 + last[done] - first[done]
        elif done == -1:
            floor[c] = h
        frame[G_DONE] = -2
        if done != -2 and state[T_ANSWER] == 1:
            state[T_CANDIDATES] = frame[G_FROM]
            state[T_DEPTH] = f
            continue
        if jump == 1 and done != -2:
            involved = done < 0 or _holds(failed, done)  # (a raised floor: not where `jump` is on)
            if not involved:
                # the failure below holds whatever this point holds (backjumping): fail with it
                state[T_CANDIDATES] = frame[G_FROM]
                state[T_DEPTH] = f
                continue
            _union(windows[f], failed)
            state[T_WORK] += len(failed)
        nxt = frame[G_NEXT]
        if nxt < frame[G_COUNT]:
            k = candidates[frame[G_FROM] + nxt]
            frame[G_NEXT] = nxt + 1
            _place(k, h, first, last, size, floor, remaining, cuts, offset, solution)
            state[T_WORK] += 1 + last[k] - first[k]
            frame[G_DONE] = k
        elif nxt == frame[G_COUNT] and frame[G_RAISE] > 0:
            frame[G_NEXT] = nxt + 1
            floor[c] = frame[G_RAISE]
            frame[G_DONE] = -1
        else:  # every choice tried: back up
            state[T_ANSWER] = 0
            if jump == 1:  # its children's windows and why its candidates are all there are
                _clear(failed)
                _union(failed, windows[f])
                state[T_WORK] += 2 * len(failed) + _point_window(
                    c, h, lo, hi, floor, remaining, first, last, offset, size, alive_ptr, alive_idx,
                    failed)
            state[T_CANDIDATES] = frame[G_FROM]
            state[T_DEPTH] = f
            continue
        child = frames[f + 1]
        child[G_KIND], child[G_PHASE] = SEARCH, ENTER
        child[G_LO], child[G_HI] = lo, hi
        state[T_DEPTH] = f + 2
    return FOUND if state[T_ANSWER] == 1 else INFEASIBLE
