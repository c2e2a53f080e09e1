"""Score the minimizer: Rastrigin, Rosenbrock and Ackley in 10 dimensions, 2,000 calls each,
seeds 0-9. The score is the mean log10 of the best value found; lower is better.
This file is sealed: the loop restores it before every measurement."""

import math
import random

import minimizer

DIM, BUDGET, SEEDS = 10, 2000, range(10)


def rastrigin(x):
    return 10 * len(x) + sum(v * v - 10 * math.cos(2 * math.pi * v) for v in x)


def rosenbrock(x):
    return sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(len(x) - 1))


def ackley(x):
    n = len(x)
    s1 = sum(v * v for v in x) / n
    s2 = sum(math.cos(2 * math.pi * v) for v in x) / n
    return -20 * math.exp(-0.2 * math.sqrt(s1)) - math.exp(s2) + 20 + math.e


PROBLEMS = [(rastrigin, -5.12, 5.12), (rosenbrock, -5.0, 10.0), (ackley, -32.768, 32.768)]


class Budget(Exception):
    pass


def score():
    logs = []
    for f, lo, hi in PROBLEMS:
        for seed in SEEDS:
            calls = [0]
            best = [math.inf]

            def counted(x, f=f, lo=lo, hi=hi, calls=calls, best=best):
                if calls[0] >= BUDGET:
                    raise Budget
                calls[0] += 1
                value = f([min(hi, max(lo, v)) for v in x])
                best[0] = min(best[0], value)
                return value

            try:
                minimizer.minimize(counted, DIM, lo, hi, BUDGET, random.Random(seed))
            except Budget:
                pass
            logs.append(math.log10(best[0] + 1e-12))
    return sum(logs) / len(logs)


if __name__ == "__main__":
    print(f"METRIC score={score():.6f}")
