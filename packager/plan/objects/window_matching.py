"""Whether a window of the integer program's search (integer_program_windows.py) can have a plan
at all: at every step, can the free records alive then each have an object of their own among
those they fit? When not, the window has no plan and the solver need not be asked (every window
the solver found without a plan so far failed this way). It spares solver calls only: the
windows it rejects are those the solver finds without a plan (tests hold it to that, and to a
brute force on small windows).
"""

from __future__ import annotations

import heapq

import numpy as np


def each_step_matchable(lo: np.ndarray, hi: np.ndarray, fits: np.ndarray) -> bool:
    """Whether at every step the free records alive then can each have an object of their own
    among those they fit (fits[object, record]).

    One sweep in time keeps a matching of the records alive: a record that ends frees its object;
    one that starts looks for an augmenting path. The matching covers every record alive before
    it starts, so it is a largest one; no path means none covers them all (Berge)."""
    options = _bit_rows(fits.T)
    lo_l, hi_l = lo.tolist(), hi.tolist()
    holder: dict[int, int] = {}  # object -> record holding it
    held = [0] * len(lo_l)  # record -> bit of its object
    taken = 0  # bits of the objects held
    ending: list[tuple[int, int]] = []  # (last step, record) of those alive, a heap
    for r in sorted(range(len(lo_l)), key=lo_l.__getitem__):
        while ending and ending[0][0] < lo_l[r]:
            _, gone = heapq.heappop(ending)
            taken &= ~held[gone]
            del holder[held[gone].bit_length() - 1]
        free = options[r] & ~taken
        if free:  # most records: an object nobody alive holds
            bit = free & -free
            held[r] = bit
            holder[bit.bit_length() - 1] = r
        else:
            bit = _augmenting(r, options, holder, held, taken)
            if not bit:
                return False
        taken |= bit
        heapq.heappush(ending, (hi_l[r], r))
    return True


def _bit_rows(table: np.ndarray) -> list[int]:
    """Each row of a boolean table as the int whose bit p is its column p."""
    packed = np.packbits(table, axis=1, bitorder="little")
    width = packed.shape[1]
    if width <= 8:  # one machine word per row: numpy makes the ints
        words = np.zeros((len(packed), 8), dtype=np.uint8)
        words[:, :width] = packed
        return words.view("<u8").ravel().tolist()
    return [int.from_bytes(row, "little") for row in map(bytes, packed)]


def _augmenting(record: int, options: list[int], holder: dict[int, int], held: list[int], taken: int) -> int:
    """A path from `record` through objects and their holders to an object nobody holds, found
    breadth first; along it each record takes the next object. The object newly held, or 0 when
    there is no such path."""
    reached_by: dict[int, int] = {}  # object bit -> the record that reached it
    seen = 0
    frontier = [record]
    while frontier:
        nxt = []
        for r in frontier:
            reach = options[r] & ~seen
            seen |= reach
            while reach:
                bit = reach & -reach
                reach ^= bit
                reached_by[bit] = r
                if bit & taken:
                    nxt.append(holder[bit.bit_length() - 1])
                    continue
                newly = bit
                while True:  # each record on the path takes the object it reached
                    r_ = reached_by[bit]
                    before = held[r_]
                    held[r_] = bit
                    holder[bit.bit_length() - 1] = r_
                    if r_ == record:
                        return newly
                    bit = before
        frontier = nxt
    return 0
