"""How far TFLite Micro's whole-arena figure is proven: its standing, decided in one place.

A figure is one of
    exact    shown by the runtime's own code: a build of the figure's target sets the packaged
             model up and runs it in N bytes and not in N - 16, or (device targets) that build
             has proven the rules for every kernel form in the model;
    upper    the runtime needs at most N (it ran in N, or the rules count memory it may reuse);
    lower    the runtime needs at least N (it did not run in N, or the rules leave memory out);
    unknown  neither side is shown (not run, and the rules lean no way or both ways).
with a one-line reason. Every place that states the whole arena (the summary's first line, the
header, the plan files, `package --json`, the report page) says the same standing, in the words
made here.

`decide` is the hook for a target's runtime or oracle: give it what a build of that target did
(`Shown`) and the figure is settled by that, as the pinned host wheel settles host figures. A
device target whose build has proven the rules of every kernel form in the model (its coverage
matrix, kernels/tflm_coverage.py) is exact without running it; any other target no build of
which ran the model stays "unknown".
"""

from __future__ import annotations

from dataclasses import dataclass

EXACT, UPPER, LOWER, UNKNOWN = "exact", "upper", "lower", "unknown"
BOUNDS = (EXACT, UPPER, LOWER, UNKNOWN)
ARENA_STEP = 16  # the figures are multiples of 16: "16 B less" is the next smaller one

# What each standing makes of the figure, for the words said before it.
_PHRASE = {EXACT: "", UPPER: "at most ", LOWER: "at least ", UNKNOWN: ""}


@dataclass(frozen=True)
class Shown:
    """What a build of `target` did with the packaged model (package/verify.py for host)."""
    target: str
    runtime: str  # e.g. "tflite-micro 0.dev20261023182759"
    arena: int  # the figure tried
    runs: bool  # it sets the model up and runs it in `arena` bytes
    runs_below: bool | None  # ... in `arena` - 16 (None: not tried)


@dataclass(frozen=True)
class Standing:
    bound: str  # one of BOUNDS
    reason: str  # one line: how it was shown exact, or why it lies on that side

    @property
    def exact(self) -> bool:
        return self.bound == EXACT


def decide(figure: int, target: str, rules_side: str, rules_why: str, shown: Shown | None,
           not_run: str, target_rule: str = "", proven_by: str = "") -> Standing:
    """The standing of `figure`, from what the kernels' rules say (`rules_side`, one of BOUNDS,
    and `rules_why`, why they are not exact) and what a build of `target` showed (`shown`; None
    or another target's: nothing, and `not_run` says why). `target_rule`: how a target no
    runtime here checks is modelled (cortex-m). `proven_by`: how the rules were proven for every
    kernel in this model on the target's own build (its coverage matrix), when they were."""
    lean = f": {rules_why}" if rules_why else ""
    if shown is None or shown.target != target:
        if proven_by and rules_side == EXACT:
            return Standing(EXACT, f"not run on a {target} build here; exact by its kernels' rules, {proven_by}")
        if target_rule:  # a modelled target (cortex-m): its struct sizes may be off either way
            return Standing(UNKNOWN, f"not run on a {target} build: modelled, not measured, {target_rule}; "
                                     f"a device build may need a few bytes more or less{lean}")
        if rules_side == EXACT:
            return Standing(UNKNOWN, f"not run on TFLite Micro ({not_run}): predicted by its kernels' "
                                     "rules, not shown on this model")
        return Standing(rules_side, f"by TFLite Micro's kernels' rules, not run ({not_run}){lean}")
    if shown.runs and shown.runs_below is False:
        return Standing(EXACT, f"{shown.runtime} sets the model up and runs it in {figure:,} B and not "
                               f"in {ARENA_STEP} B less")
    if shown.runs and shown.runs_below:
        return Standing(UPPER, f"{shown.runtime} runs the model in {figure:,} B and in "
                               f"{figure - ARENA_STEP:,} B too{lean}")
    if shown.runs:
        return Standing(UPPER, f"{shown.runtime} runs the model in {figure:,} B{lean}")
    return Standing(LOWER, f"{shown.runtime} does not run the model in {figure:,} B{lean}")


# A standing in a few words, where a figure is named.
SIDE_WORDS = {EXACT: "exact", UPPER: "an upper bound", LOWER: "a lower bound", UNKNOWN: "not proven either way"}


def declare_words(bound: str, figure: int) -> str:
    """The summary's first words: `declare 1,712 bytes`, `declare at most 3,136 bytes`..."""
    return f"declare {_PHRASE[bound]}{figure:,} bytes"
