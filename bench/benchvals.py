"""bench/benchvals.py - median [min-max] of the repetitions of one row, as
the tables of bench/run-*.sh print it (their Python parts import this with
PYTHONPATH=bench; see bench/lib.sh)."""


def mrange(xs):
    """(median, min, max) of the values xs, None if there are none."""
    v = sorted(xs)
    if not v:
        return None
    k = len(v)
    return (v[k // 2] if k % 2 else 0.5 * (v[k // 2 - 1] + v[k // 2]), v[0], v[-1])


def fmt(x):
    """About 3 significant digits, no exponent."""
    return "%.0f" % x if x >= 100 else "%.2f" % x if x >= 1 else "%.3f" % x


def cell(m, f=fmt):
    """"median [min-max]" of an mrange() result, "-" for None."""
    return "%s [%s-%s]" % (f(m[0]), f(m[1]), f(m[2])) if m else "-"
