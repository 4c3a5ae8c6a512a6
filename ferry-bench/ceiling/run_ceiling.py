#!/usr/bin/env python3
"""W3's echo over loopback TCP as a C program (tcp_echo.c): what the machine allows a tensor echo.

Compiles tcp_echo.c with gcc, then runs it for 16 MiB (3 warm-up + 40 timed round trips) and
128 MiB (2 + 10), over 1, 2 and 4 streams, --repeats times each, configurations interleaved, and
writes the median [min .. max] GB/s (both ways, as W3 counts) of each to --out as JSON.

Run:  python3 ferry-bench/ceiling/run_ceiling.py --repeats 5 --out /tmp/ceiling.json
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

SIZES = [(16, 3, 40), (128, 2, 10)]
STREAMS = [1, 2, 4]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    binary = os.path.join(tempfile.mkdtemp(prefix="ferry-ceiling-"), "tcp_echo")
    subprocess.run(["gcc", "-O2", "-Wall", "-pthread", "-o", binary, os.path.join(here, "tcp_echo.c")], check=True)
    runs = {}
    for repeat in range(args.repeats):
        for mib, warmup, timed in SIZES:
            for streams in STREAMS:
                line = subprocess.run([binary, str(mib), str(streams), str(warmup), str(timed)],
                                      check=True, capture_output=True, text=True, timeout=320).stdout
                result = json.loads(line)
                key = "%dMiB.streams%d.GB_per_s" % (mib, streams)
                runs.setdefault(key, []).append(result["GB_per_s"])
                print("run %d %s %.3f" % (repeat, key, result["GB_per_s"]), flush=True)
    summary = {key: {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}
               for key, values in runs.items()}
    with open(args.out, "w") as out:
        json.dump({"limit": "tcp_echo", "summary": summary, "runs": runs}, out, indent=1)
        out.write("\n")


if __name__ == "__main__":
    main()
