#!/usr/bin/env bash
# demo-udp.sh: the second half of `make demo`: a measurement of something real. ett-udp-demo runs a UDP
# client and server on the host's loopback (two processes, probe 1 = client send, probe 2 = server receive,
# marked through libettprobe) while the kernel captures under QEMU (`ett qemu run --run`); the capture is
# loaded into SQLite and `ett analyze durations` fits the one-way latency against the message size; a second
# run with a planted delay shows `ett compare` gating on the regression.
# usage: qemu/demo-udp.sh BIN_DIR   (ROUNDS=N in the environment: requests per size, default 200)
set -euo pipefail
bin=$(cd "${1:?usage: demo-udp.sh BIN_DIR}" && pwd)
ett="$bin/ett"
demo="$bin/ett-udp-demo"
work="$(dirname "$bin")/demo"
mkdir -p "$work"
disk="$work/trace.img"   # the same trace disk as the scenario demo: one more session
db="$work/demo.db"       # SQLite; every run adds a trace, the analysis reads the newest
rounds="${ROUNDS:-200}"
sizes=16,256,1024,4096,16384,32768,60000

# The error bound of every duration: the precision pi of this (virtual) measurement PC, from a mode=calibrate
# capture (every loop step recorded) on a small scratch disk of its own, whose size caps the capture (2 MiB:
# about 61,000 steps). `ett analyze precision` stores it; `ett analyze durations` quotes it for traces of the
# same CPU.
echo "== 5. precision of this measurement PC: a mode=calibrate capture, then ett analyze precision"
scratch=$(mktemp -d "$work/calibrate.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
"$ett" mkdisk "$scratch/calibrate.img" --size 2M >/dev/null
echo "0 1 1" >"$scratch/one.scn"  # calibrate ignores the lines: the buffer fills before the host stops it
"$ett" qemu run --disk "$scratch/calibrate.img" --scenario "$scratch/one.scn" --append mode=calibrate \
  >"$scratch/run.txt" 2>&1 || { cat "$scratch/run.txt"; exit 1; }
"$ett" load "$scratch/calibrate.img" --db "sqlite:$db"
"$ett" analyze precision --db "sqlite:$db"

echo
echo "== 6. live capture: ett-udp-demo ($rounds requests of each size: $sizes bytes) under ett qemu run --run"
"$ett" qemu run --disk "$disk" --run "'$demo' --rounds $rounds --sizes $sizes" \
  --sent-log "$work/udp-sent.csv" --serial-log "$work/udp-serial.log"

echo
echo "== 7. load the newest session into $db"
"$ett" load "$disk" --db "sqlite:$db"

echo
echo "== 8. one-way latency (client send on probe 1 -> server receive on probe 2) against the message size"
map=$("$demo" --size-map --sizes "$sizes")
echo "ett analyze durations --from 1 --to 2 --size-of-code \"$map\" --fit linear"
"$ett" analyze durations --db "sqlite:$db" --from 1 --to 2 --size-of-code "$map" --fit linear

# Least squares weighs every action alike, so one emulator stall (QEMU's vCPU thread descheduled by the host for
# milliseconds while an action is open) can outweigh the size effect on a busy machine. The medians per size
# ignore such outliers; the same fit over the medians shows what a quiet run gives.
echo
echo "== 9. robust to stalls: median per size and the least-squares line through the medians"
"$ett" analyze durations --db "sqlite:$db" --from 1 --to 2 --format csv | awk -F, -v map="$map" '
  BEGIN { n = split(map, pairs, ","); for (i = 1; i <= n; i++) { split(pairs[i], kv, "="); size[kv[1]] = kv[2] } }
  NR > 1 { s = size[$3]; count[s]++; d[s, count[s]] = $7 }
  END {
    printf "%10s %8s %14s\n", "size", "count", "median (ns)"
    for (s in count) sizes[++m] = s + 0
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (sizes[j] < sizes[i]) { t = sizes[i]; sizes[i] = sizes[j]; sizes[j] = t }
    for (i = 1; i <= m; i++) {
      s = sizes[i]; k = count[s]
      for (a = 1; a <= k; a++) v[a] = d[s, a]
      for (a = 1; a <= k; a++) for (b = a + 1; b <= k; b++) if (v[b] < v[a]) { t = v[a]; v[a] = v[b]; v[b] = t }
      med = (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
      printf "%10d %8d %14.1f\n", s, k, med
      sx += s; sy += med; sxx += s * s; sxy += s * med
    }
    slope = (m * sxy - sx * sy) / (m * sxx - sx * sx); intercept = (sy - slope * sx) / m
    printf "medians: one-way latency = %.1f ns + %.4f ns x size (%.2f GB/s)\n", intercept, slope, (slope > 0 ? 1 / slope : 0)
  }'

# A timing regression gate, as a CI job would run it: the same demo again with a regression planted in the
# client (it waits --delay-us between marking a send and sending), loaded as a second trace, then `ett compare`
# judges the one-way latency's median against the first run. Differences within ±pi are no change; under QEMU
# the 100 % level of pi is an emulator stall of the calibrate capture (step 5), not the loop, so the gate is given
# the 99.7 % level; and the host preempts QEMU's vCPU so often that the stall records flag many actions, so the
# demo keeps them (--stalled keep: the median stays robust). Exit status 1 is the gate firing; the demo shows it
# and goes on.
echo
echo "== 10. regression gate: the same demo with a 20 us delay planted in the client, then ett compare"
last_trace() { "$ett" sql --db "sqlite:$db" --csv "SELECT MAX(trace_id) FROM traces" | tail -n 1; }
baseline=$(last_trace)
pi=$("$ett" sql --db "sqlite:$db" --csv \
  "SELECT pi_ns FROM analysis_precision WHERE coverage = 0.997 ORDER BY trace_id DESC LIMIT 1" | tail -n 1)
"$ett" qemu run --disk "$disk" --run "'$demo' --rounds $rounds --sizes $sizes --delay-us 20" \
  --serial-log "$work/udp-serial-delayed.log" >/dev/null
"$ett" load "$disk" --db "sqlite:$db"
candidate=$(last_trace)
echo "ett compare --baseline $baseline --candidate $candidate --from 1 --to 2 --max-regression 10% --pi-ns $pi --stalled keep"
status=0
"$ett" compare --db "sqlite:$db" --baseline "$baseline" --candidate "$candidate" --from 1 --to 2 \
  --max-regression 10% --pi-ns "$pi" --stalled keep || status=$?
echo "(ett compare exited $status: 0 = not slower, 1 = the gate fired, 7 = the data cannot decide)"
[ "$status" -le 1 ]
