#!/usr/bin/env bash
# demo-udp.sh: the second half of `make demo`: a measurement of something real. ett-udp-demo runs a UDP
# client and server on the host's loopback (two processes, probe 1 = client send, probe 2 = server receive,
# marked through libettprobe) while the kernel captures under QEMU (`ett qemu run --run`); the capture is
# loaded into SQLite and `ett analyze durations` fits the one-way latency against the message size.
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

echo "== 5. live capture: ett-udp-demo ($rounds requests of each size: $sizes bytes) under ett qemu run --run"
"$ett" qemu run --disk "$disk" --run "'$demo' --rounds $rounds --sizes $sizes" \
  --sent-log "$work/udp-sent.csv" --serial-log "$work/udp-serial.log"

echo
echo "== 6. load the newest session into $db"
"$ett" load "$disk" --db "sqlite:$db"

echo
echo "== 7. one-way latency (client send on probe 1 -> server receive on probe 2) against the message size"
map=$("$demo" --size-map --sizes "$sizes")
echo "ett analyze durations --from 1 --to 2 --size-of-code \"$map\" --fit linear"
"$ett" analyze durations --db "sqlite:$db" --from 1 --to 2 --size-of-code "$map" --fit linear

# Least squares weighs every action alike, so one emulator stall (QEMU's vCPU thread descheduled by the host for
# milliseconds while an action is open) can outweigh the size effect on a busy machine. The medians per size
# ignore such outliers; the same fit over the medians shows what a quiet run gives.
echo
echo "== 8. robust to stalls: median per size and the least-squares line through the medians"
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

# Under TCG the guest's TSC is the host's TSC minus a constant, so each mark's signal-to-stamp latency is its
# stamp minus the host TSC read right after its store (the sent log's host_tsc), up to that constant: the
# smallest difference of the run is taken as zero. Ticks become ns at the session's TSC rate (time_ns / tsc).
# Marks are matched per probe (each process's own marks keep their order; two marks stamped in one poll are
# recorded in probe order, whatever order they were written in).
echo
echo "== 9. signal-to-stamp latency of the marks (stamp - host TSC after the store, minus the run's smallest)"
"$ett" extract "$disk" --format csv -o "$work/udp-events.csv" --force
awk -F, '
  FNR == 1 { next }
  FILENAME ~ /udp-sent.csv$/ { k = $2 SUBSEP (++ns[$2]); sent[k] = $7; scode[k] = $3; next }
  {
    k = $2 SUBSEP (++ne[$2])
    if (!(k in sent) || scode[k] != $3) { printf "mark %d of probe %d does not match the sent log\n", ne[$2], $2; bad = 1; exit 1 }
    if (!n) { tsc0 = $4; ns0 = $5 } tsc1 = $4; ns1 = $5
    d[++n] = $4 - sent[k]; if (n == 1 || d[n] < lo) lo = d[n]
  }
  END {
    if (bad) exit 1
    ns_per_tick = (ns1 - ns0) / (tsc1 - tsc0)
    for (i = 1; i <= n; i++) { l[i] = (d[i] - lo) * ns_per_tick; if (l[i] <= 100000) within++ }
    for (i = 2; i <= n; i++) { v = l[i]; j = i - 1; while (j > 0 && l[j] > v) { l[j + 1] = l[j]; j-- } l[j + 1] = v }
    printf "%d marks: median %.2f us, p90 %.1f us, p99 %.1f us, max %.1f us; %.1f %% within 100 us\n", n,
      l[int(n / 2) + 1] / 1e3, l[int(n * 0.9)] / 1e3, l[int(n * 0.99)] / 1e3, l[n] / 1e3, 100 * within / n
  }' "$work/udp-sent.csv" "$work/udp-events.csv"
