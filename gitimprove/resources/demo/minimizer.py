"""A black-box minimizer. The demo's agent improves it by changing the tunables below;
each tunable switches real code paths (search strategy, step-size adaptation, restarts,
coordinate search, population)."""

STRATEGY = "random"  # tune[architecture]: "random" | "local" | "coordinate" | "population"
STEP = 0.5  # tune[optimization]: 0.02 | 0.05 | 0.1 | 0.2 | 0.5
ADAPT = False  # tune[optimization]: False | True
RESTARTS = 0  # tune[config]: 0 | 1 | 3 | 7
POPULATION = 10  # tune[config]: 4 | 10 | 20 | 40
SHRINK = 0.5  # tune[optimization]: 0.3 | 0.5 | 0.7 | 0.9


def minimize(f, dim, lo, hi, budget, rng):
    """Call f at most `budget` times; the caller keeps the best value seen."""
    width = hi - lo
    per_start = max(1, budget // (RESTARTS + 1))
    for _ in range(RESTARTS + 1):
        start = [rng.uniform(lo, hi) for _ in range(dim)]
        if STRATEGY == "random":
            for _ in range(per_start):
                f([rng.uniform(lo, hi) for _ in range(dim)])
        elif STRATEGY == "local":
            local_search(f, start, STEP * width, per_start, rng)
        elif STRATEGY == "coordinate":
            coordinate_search(f, start, STEP * width, per_start)
        else:
            population_search(f, dim, lo, hi, STEP * width, per_start, rng)


def local_search(f, x, step, calls, rng):
    """(1+1) evolution strategy, with the 1/5th success rule when ADAPT is on."""
    fx = f(x)
    successes = trials = 0
    for _ in range(calls - 1):
        y = [v + rng.gauss(0, step) for v in x]
        fy = f(y)
        trials += 1
        if fy < fx:
            x, fx = y, fy
            successes += 1
        if ADAPT and trials == 10:
            step *= 1.5 if successes > 2 else SHRINK
            successes = trials = 0
        elif not ADAPT and trials == 50 and successes == 0:
            step *= SHRINK
            trials = 0


def coordinate_search(f, x, step, calls):
    """Compass search: try +-step along each axis; shrink the step when nothing helps."""
    fx = f(x)
    used = 1
    while used < calls and step > 1e-12:
        improved = False
        for i in range(len(x)):
            for sign in (1, -1):
                y = list(x)
                y[i] += sign * step
                fy = f(y)
                used += 1
                if fy < fx:
                    x, fx, improved = y, fy, True
                    break
                if used >= calls:
                    return
        if not improved:
            step *= SHRINK


def population_search(f, dim, lo, hi, step, calls, rng):
    """A (mu, lambda) evolution strategy around the best members of a population."""
    pop = [[rng.uniform(lo, hi) for _ in range(dim)] for _ in range(POPULATION)]
    scored = sorted((f(p), p) for p in pop)
    used = len(pop)
    mu = max(1, POPULATION // 4)
    while used < calls:
        parents = [p for _, p in scored[:mu]]
        children = []
        for _ in range(POPULATION):
            parent = parents[rng.randrange(mu)]
            children.append([v + rng.gauss(0, step) for v in parent])
        scored = sorted(scored[:mu] + [(f(c), c) for c in children])
        used += POPULATION
        if ADAPT:
            step *= SHRINK ** (1.0 / dim)
