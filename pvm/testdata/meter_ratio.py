"""Times the same CPU-bound actor code plain vs metered (instrumented) on
this CPython. Usage: meter_ratio.py <pvm python dir>. Prints one line per
workload: name plain_seconds metered_seconds ratio cycles."""

import sys
import time

sys.path.insert(0, sys.argv[1])

import _pvm_env  # noqa: E402
import _pvm_rt as rt  # noqa: E402

WORKLOADS = {
    "arith_loop": """
def work():
    s = 0
    for i in range(300000):
        s = (s + i * i) % 1000003
    return s
""",
    "fib_calls": """
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)
def work():
    return fib(22)
""",
    "dict_list": """
def work():
    d = {}
    out = []
    for i in range(100000):
        k = i % 97
        d[k] = d.get(k, 0) + i
        out.append(d[k] & 0xff)
    return sum(out)
""",
    "string_ops": """
def work():
    parts = []
    for i in range(50000):
        parts.append(str(i) + ",")
    s = "".join(parts)
    return len(s.split(","))
""",
    "sort_comprehension": """
def work():
    xs = [(i * 7919) % 10007 for i in range(100000)]
    ys = sorted(xs)
    return sum(x for x in ys if x % 3 == 0)
""",
}

COSTS = {"stmt": 1, "arith": 1, "compare": 1, "call": 10, "subscript": 3, "attribute": 1,
         "list_append": 2, "loop_iter": 1}
LIMITS = {"memory_bytes": 1 << 30}


def best(f, n=9):
    t = []
    for _ in range(n):
        t0 = time.process_time()
        f()
        t.append(time.process_time() - t0)
    return min(t)


def main():
    sys.setrecursionlimit(1000)
    total_p = total_m = 0.0
    for name, src in WORKLOADS.items():
        g = {}
        exec(compile(src, "<plain>", "exec"), g)
        plain = best(g["work"])
        rt.configure(10 ** 9, LIMITS, COSTS)
        loader = _pvm_env.Loader(LIMITS, COSTS, {})
        mg, _ = loader.exec_module("bench", src.encode(), "<actor>")
        r1 = g["work"]()
        before = rt.K[0]
        r2 = mg["work"]()
        cycles = before - rt.K[0]
        if r1 != r2:
            raise SystemExit("result mismatch in %s: %r != %r" % (name, r1, r2))
        metered = best(mg["work"])
        total_p += plain
        total_m += metered
        print("%s %.4f %.4f %.2f %d" % (name, plain, metered, metered / plain, cycles))
    print("total %.4f %.4f %.2f 0" % (total_p, total_m, total_m / total_p))


main()
