#!/usr/bin/env bash
# demo.sh: the `make demo` job. Boots the capture kernel under QEMU, plays the bundled scenario into the
# virtual probe, extracts the captured events from the trace disk and compares them with what was sent.
# usage: qemu/demo.sh BIN_DIR   (BIN_DIR holds ett and ett-kernel.elf; the demo's files go next to it)
set -euo pipefail
bin=$(cd "${1:?usage: demo.sh BIN_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
ett="$bin/ett"
scenario="$here/scenarios/demo.scn"
work="$(dirname "$bin")/demo"
mkdir -p "$work"
disk="$work/trace.img"   # kept between runs: every demo appends a new session to the same trace disk

echo "== 1. capture: boot the kernel under QEMU and play $(basename "$scenario") into the virtual probe"
"$ett" qemu run --disk "$disk" --scenario "$scenario" --sent-log "$work/sent.csv" --serial-log "$work/serial.log"

echo
echo "== 2. the trace disk"
"$ett" ls "$disk"

echo
echo "== 3. extract the newest session"
"$ett" extract "$disk" --format csv -o "$work/events.csv" --force
echo "first events ($work/events.csv):"
head -n 6 "$work/events.csv" | awk -F, '{ printf "  %6s %6s %5s %22s %14s\n", $1, $2, $3, $4, $5 }'

echo
echo "== 4. summary: captured vs sent"
awk -F, '
  FNR == 1 { next }
  FILENAME ~ /sent.csv$/ { sent++; sp[sent] = $2; sc[sent] = $3; next }
  {
    n++; probe[n] = $2; code[n] = $3; t[n] = $5; count[$2]++
  }
  END {
    ok = 1
    if (n != sent) ok = 0
    for (i = 1; i <= n && i <= sent; i++) if (probe[i] != sp[i] || code[i] != sc[i]) { ok = 0; bad = i; break }
    # request -> response: probe 1 code c followed by probe 2 code c
    for (i = 1; i < n; i++) if (probe[i] == 1 && probe[i+1] == 2 && code[i] == code[i+1]) {
      d = t[i+1] - t[i]; pairs++; sum += d; if (min == "" || d < min) min = d; if (d > max) max = d
    }
    printf "events sent:      %d\n", sent
    printf "events captured:  %d (probe 1: %d, probe 2: %d)\n", n, count[1], count[2]
    printf "capture span:     %.3f ms\n", (t[n] - t[1]) / 1e6
    if (pairs) printf "request->response: %d pairs, mean %.1f us, min %.1f us, max %.1f us (scenario: 200 us)\n", pairs, sum / pairs / 1e3, min / 1e3, max / 1e3
    if (ok) print "result:           every event captured, same probes, codes and order"
    else { printf "result:           MISMATCH (first difference at event %d)\n", bad; exit 1 }
  }' "$work/sent.csv" "$work/events.csv"
