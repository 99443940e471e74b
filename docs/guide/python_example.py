"""A worked example of the Python package ett (docs/guide/python.md), run as it is by the test python_example:
two synthetic runs written to a trace image, loaded into a database, read into numpy and pandas, their action
durations plotted with matplotlib, fitted against a size per code, and the two runs compared.

    python3 python_example.py [OUTPUT_DIR]     # `ett` on PATH (or $ETT_BIN); writes durations.png there
"""

import os
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")  # no display: write files
import matplotlib.pyplot as plt  # noqa: E402

import ett  # noqa: E402

ETT = os.environ.get("ETT_BIN", "ett")
out_dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
image = os.path.join(out_dir, "runs.img")
db = "sqlite:" + os.path.join(out_dir, "runs.db")
for made in (image, db[len("sqlite:"):]):  # a run of its own: what an earlier one made goes first
    if os.path.exists(made):
        os.remove(made)

# Two runs of the same traffic, the second one's clock 40 ppm fast (a stand-in for a slower build).
for extra in ([], ["--clock-ppm", "40"]):
    subprocess.run([ETT, "synth", image, "--events", "20000", "--seed", "1", "-q", *extra], check=True)

# 1. A capture straight from the trace image: its events as a numpy array, decoded without a CSV step.
capture = ett.open(image, session=1)
events = capture.events()
print(f"session {capture.session}: {events.size} events, {capture.header['tsc_hz']} Hz TSC")
print(f"probe 1 events: {(events['probe'] == 1).sum()}")

# 2. Both runs in the database, where the analyses of `ett analyze` work.
loaded = ett.load(image, db, all=True)
baseline, candidate = (ett.open(db, trace=row["trace_id"]) for row in loaded)

# 3. Durations from each start on probe 1 to the end on probe 2, each with its bound (pi given by hand here;
#    a calibration capture of the machine stores it) and its stall flag.
actions = baseline.actions("1", "2", pi_ns=1100)
print(actions[["start_seq", "end_seq", "start_code", "duration_ns", "bound_ns", "stall"]].head(3))

fig, ax = plt.subplots(figsize=(8, 4))
for code, group in actions.groupby("start_code"):
    ax.hist(group["duration_ns"] / 1e6, bins=40, histtype="step", label=f"code {code}")
ax.set_xlabel("duration (ms)")
ax.set_ylabel("actions")
ax.legend()
png = os.path.join(out_dir, "durations.png")
fig.savefig(png)
print(f"plot: {os.path.basename(png)}")

# 4. A line through the durations against the size each start code stands for.
fit = baseline.fit("1", "2", {1: 16, 2: 500, 3: 900, 4: 1500}, method="robust", pi_ns=1100)
print(f"fit: duration = {fit['intercept_ns']:.0f} ns + {fit['slope_ns']:.1f} ns x size")

# 5. The two runs compared as `ett compare` does: bootstrap bounds per statistic, and the gate's decision.
result = ett.compare(db, [baseline.trace_id], [candidate.trace_id], "1", "2", pi_ns=1100, resamples=500)
median = result["stats"][0]
print(f"median: baseline {median['baseline_ns']:.0f} ns, candidate {median['candidate_ns']:.0f} ns, "
      f"{median['verdict']}; gate: {result['gate']['decision']}")
