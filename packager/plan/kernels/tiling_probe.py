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
empty and below every floor is full): every dead end comes with a window of sections whose
placed records explain it (an untileable well: the run and its walls; a point nothing can cover:
the run of sections at or below its floor and their walls; a record that no longer fits: its
span), and a point whose choices are all tried fails with its children's windows and its own
run's. Backing up, a point whose placed record lies outside the window below it fails at once
with that window: keeping every record placed across the window, the same dead end follows
whatever the point holds, so its other choices are not tried (conflict-directed backjumping).

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
# a failure's window (with `jump`): the sections whose placed records explain it
T_WLO, T_WHI = 6, 7
TILING_SCALARS = 8

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
# (with `jump`) the window of its children's failures so far
G_WLO, G_WHI = 11, 12
# a split: its parts (pairs in the part buffer), how many, the next one
G_PARTS, G_PART_COUNT, G_PART = 4, 5, 6
FRAME_WIDTH = 13


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


def _run_window(c, f, lo, hi, floor, remaining):
    """Why no record but the candidates can cover the point (c, f) (`jump`): the run of sections
    around c with floors at most f, and its walls (a higher floor, a full section or the end of
    the part). A record covering (c, f) in a packing sits on f (below is full) and cannot reach
    over a wall, so with what is placed across the run and its walls kept, the candidates stay
    the same. Returns (first section, last section, steps)."""
    a, b = c, c
    while a > lo and remaining[a - 1] > 0 and floor[a - 1] <= f:
        a -= 1
    while b + 1 < hi and remaining[b + 1] > 0 and floor[b + 1] <= f:
        b += 1
    return a - 1, b + 1, b - a + 1


def _choice(lo, hi, floor, remaining, first, last, size, offset, twin, alive_ptr, alive_idx,
            capacity, granule, top, stamp, node, reach, walled, jump, tie):
    """The point to fill among the sections [lo, hi): (section, floor, how far its floor may rise
    if left empty (0: not at all), candidates, steps, window). section -1: everything there is
    placed; -2: a dead end: a record that can no longer fit under the capacity, or a section
    without slack whose floor no record can cover (every record left there reaches over a higher
    floor: the point would stay empty for ever); its window is the sections whose placed records
    explain it (`jump`)."""
    steps = hi - lo
    h = -1
    for c in range(lo, hi):
        if remaining[c] > 0 and (h < 0 or floor[c] < h):
            h = floor[c]
    if h < 0:
        return -1, 0, 0, 0, steps, 0, -1
    dead, more, wlo, whi = _untileable_well(lo, hi, floor, remaining, first, last, size, offset,
                                            alive_ptr, alive_idx, capacity, granule, reach, walled)
    steps += more
    if dead:
        return -2, h, 0, 0, steps, wlo, whi
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
                return -2, h, 0, 0, steps, first[j], last[j]
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
            wlo, whi, more = _run_window(c, f, lo, hi, floor, remaining) if jump == 1 else (0, -1, 0)
            return -2, h, 0, 0, steps + more, wlo, whi
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
            return -2, h, 0, 0, steps, lo - 1, hi
        # the fewest choices first (a raise counts as one)
        choices = count + (1 if raise_to > 0 else 0)
        if best_count < 0 or choices < best_count or (choices == best_count and tie[c] < tie[best]):
            best, best_count, best_raise, best_floor = c, choices, raise_to, h
    return best, best_floor, best_raise, best_count, steps, 0, -1


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
               frames, candidates, parts, top, stamp, reach, walled):
    """Run (or resume) the search until it answers, reaches `node_limit` nodes or `work_limit`
    steps, or needs a bigger buffer; returns one of the codes above (FOUND: `solution` holds the
    packing). The caller sets floor to 0, remaining to the bytes alive per section, cuts to the
    records crossing each boundary, offset to -1, and the root frame: a search of every section."""
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
            c, h, raise_to, count, steps, wlo, whi = _choice(
                lo, hi, floor, remaining, first, last, size, offset, twin, alive_ptr, alive_idx,
                capacity, granule, top, stamp, state[T_NODES], reach, walled, jump, tie)
            state[T_WORK] += steps
            if c == -1:
                state[T_ANSWER] = 1
                state[T_DEPTH] = f
                continue
            if c == -2:  # a dead end: back up
                state[T_ANSWER] = 0
                state[T_WLO], state[T_WHI] = wlo, whi
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
            frame[G_WLO], frame[G_WHI] = len(floor), -1
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
            wlo, whi = state[T_WLO], state[T_WHI]
            involved = (first[done] <= whi and last[done] >= wlo) if done >= 0 else wlo <= c <= whi
            if not involved:
                # the failure below holds whatever this point holds (backjumping): fail with it
                state[T_CANDIDATES] = frame[G_FROM]
                state[T_DEPTH] = f
                continue
            frame[G_WLO], frame[G_WHI] = min(frame[G_WLO], wlo), max(frame[G_WHI], whi)
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
            if jump == 1:
                wlo, whi, steps = _run_window(c, h, lo, hi, floor, remaining)
                state[T_WORK] += steps
                state[T_WLO] = min(frame[G_WLO], wlo)
                state[T_WHI] = max(frame[G_WHI], whi)
            state[T_CANDIDATES] = frame[G_FROM]
            state[T_DEPTH] = f
            continue
        child = frames[f + 1]
        child[G_KIND], child[G_PHASE] = SEARCH, ENTER
        child[G_LO], child[G_HI] = lo, hi
        state[T_DEPTH] = f + 2
    return FOUND if state[T_ANSWER] == 1 else INFEASIBLE
