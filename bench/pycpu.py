"""pycpu.py [ROUNDS] - a single-threaded, CPU-bound Python workload for the
agreement measure of bench/run.sh (issue 10).

examples/busy.py runs a hashing thread beside the main thread; the two
share the GIL, so how its time splits depends on scheduling and moves
from run to run for any profiler.  This script has one thread, no child
and no input: every run does the same work in the same order, so two
profiles of it differ by the profilers (and by sampling), not by the
workload.  Each round mixes pure-interpreter loops, sorting, string
operations and json, about 0.6 CPU s per round with python3.11 on the
bench machine; the default is 5 rounds."""
import json
import sys


def loops(n):
    """Pure interpreter work: integer arithmetic in a Python loop."""
    total = 0
    for i in range(n):
        x = i
        steps = 0
        while x != 1 and steps < 40:
            x = x // 2 if x % 2 == 0 else 3 * x + 1
            steps += 1
        total += steps
    return total


def sorting(n):
    """list.sort on tuples and strings: the interpreter's C code."""
    keys = [((i * 7919) % 100003, str((i * 104729) % 1000003)) for i in range(n)]
    a = sorted(keys)
    b = sorted(k[1] for k in keys)
    return a[0][0] + len(b[-1])


def strings(n):
    """str methods: split, join, replace, upper, find, format."""
    words = ["w%05d" % ((i * 31) % 99991) for i in range(n)]
    text = " ".join(words)
    out = 0
    for _ in range(6):
        parts = text.split(" ")
        text2 = "-".join(p.upper() for p in parts)
        text2 = text2.replace("W0", "x")
        out += text2.find("x123") + len(text2)
    return out


def jsonwork(n):
    """json.dumps and json.loads of a list of small records."""
    recs = [{"id": i, "name": "item%d" % i, "tags": ["a", "b", str(i % 7)],
             "price": i * 0.25, "ok": i % 3 == 0} for i in range(n)]
    out = 0
    for _ in range(3):
        s = json.dumps(recs)
        out += len(json.loads(s))
    return out


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    acc = 0
    for _ in range(rounds):
        acc += loops(30000)
        acc += sorting(60000)
        acc += strings(40000)
        acc += jsonwork(8000)
    print("pycpu:", rounds, "rounds,", acc)


if __name__ == "__main__":
    main()
