"""A decision's plan: the order of its runs and the keep thresholds at its planned looks.

The rule looks for a keep only at planned points (2, 4, 8, … candidate runs and the budget's
end), each with its own threshold on z = gain / se. The thresholds spend the false-keep
probability alpha over the looks in proportion to the information each look has
(alpha·(I/I_end)^rho), so that a candidate with no effect is kept with probability alpha in
all, however often the rule looks. They are computed by Monte Carlo of the very design the
rule follows — the window of earlier incumbent runs, the order of the runs, the estimator —
with Gaussian noise of known σ (the rule then corrects them for the σ it estimated). Fixed
seed, cached: a design is computed once per process.
"""

from __future__ import annotations

import math
import random
from functools import cache


def arms(n_window: int, max_runs: int, alternate: bool, first_a: int = 1) -> str:
    """The order of a decision's runs when nothing goes wrong: "B" candidate, "A" incumbent.
    The candidate runs first; with a window of earlier incumbent runs, a fresh incumbent run
    follows and then each run goes to the arm whose next run shrinks the standard error most;
    without one (or `alternate`), B and A alternate."""
    seq, na, nb = "", 0, 0
    for _ in range(max_runs):
        if not seq:
            arm = "B"
        elif alternate or n_window < 2:
            arm = "A" if seq[-1] == "B" else "B"
        elif na == 0:
            arm = "A" if nb >= first_a else "B"
        else:
            arm = "B" if nb <= n_window + na else "A"
        seq += arm
        na += arm == "A"
        nb += arm == "B"
    return seq


@cache
def design_bounds(
    alpha: float,
    n_window: int,
    max_runs: int,
    alternate: bool,
    rho: float = 1.0,
    first_a: int = 1,
    dense: tuple[int, ...] = (2, 4, 8, 16, 32, 64, 128, 256),
    sims: int = 8000,
) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """The planned looks (candidate-run counts: 2, 4, 8, … and the budget's end) and one z
    threshold per look, such that a no-effect candidate crosses any of them with probability
    alpha. The spending follows the information at each look, alpha·(I/I_end)^rho (rho 1 is
    close to Pocock's flat boundary; larger rho keeps alpha for the later, better-informed
    looks). Monte Carlo of this very design (window, order of runs, estimator) under Gaussian
    noise of known σ, fixed seed, cached."""
    seq = arms(n_window, max_runs, alternate, first_a)
    paired = alternate or n_window < 2
    n_end = seq.count("B")
    looks = tuple(sorted({n for n in dense if n < n_end} | {max(2, n_end)}))
    # the run count at which each look happens, and its information
    deferred = not paired and first_a >= max_runs  # the fresh run comes at the look itself
    at: list[int] = []
    info: list[float] = []
    nb = na = 0
    for pos, arm in enumerate(seq):
        nb += arm == "B"
        na += arm == "A"
        ready = na >= nb if paired else (na >= 1 or deferred)
        if len(at) < len(looks) and nb >= looks[len(at)] and ready:
            at.append(pos + 1)
            info.append(nb / 2.0 if paired else 1.0 / (1.0 / (n_window + na) + 1.0 / nb))
    if not at:
        return (), ()
    looks = looks[: len(at)]
    rng = random.Random(20240611)
    paths = []
    for _ in range(sims):
        ref = sum(rng.gauss(0.0, 1.0) for _ in range(n_window)) if not paired else 0.0
        sa = sb = 0.0
        na = nb = 0
        zs = []
        k = 0
        for pos, arm in enumerate(seq[: at[-1]]):
            x = rng.gauss(0.0, 1.0)
            if arm == "B":
                sb += x
                nb += 1
            else:
                sa += x
                na += 1
            if k < len(at) and pos + 1 == at[k]:
                if paired:
                    z = (sa / na - sb / nb) / math.sqrt(2.0 / nb)
                else:
                    nr = n_window + na
                    z = ((ref + sa) / nr - sb / nb) / math.sqrt(1.0 / nr + 1.0 / nb)
                zs.append(z)
                k += 1
        paths.append(zs)
    bounds: list[float] = []
    alive = list(range(sims))
    crossed = 0
    for k in range(len(at)):
        allowed = int(alpha * (info[k] / info[-1]) ** rho * sims) - crossed
        zs = sorted((paths[i][k] for i in alive), reverse=True)
        if allowed <= 0:
            c = zs[0] + 1e-9 if zs else 10.0
        elif allowed >= len(zs):
            c = -10.0
        else:
            c = (zs[allowed - 1] + zs[allowed]) / 2.0
        bounds.append(c)
        still = [i for i in alive if paths[i][k] <= c]
        crossed += len(alive) - len(still)
        alive = still
    return looks, tuple(bounds)
