#!/usr/bin/env bash
# dump_rate.sh: the dump rate to the trace disk per interface under QEMU (TCG): IDE PIO (-M pc), AHCI (q35's
# built-in controller) and NVMe. Each run is a `mode=calibrate` capture of 0.3 s (one record per loop step, so
# about 20-30 MB of chunks) dumped by `ett qemu run` to a fresh 64 MiB trace disk; the kernel prints the rate.
# The interfaces take turns, RUNS times; the table gives each one's median and its ratio to IDE's median.
# usage: bench/dump_rate.sh BIN_DIR [RUNS]   (BIN_DIR holds ett and ett-kernel.elf)
set -euo pipefail
bin=$(cd "${1:?usage: dump_rate.sh BIN_DIR [RUNS]}" && pwd)
runs=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '1000 1 1\n' >"$work/one.scn"

declare -A rates
for ((run = 1; run <= runs; ++run)); do
  for interface in ide ahci nvme; do
    machine=q35
    [ "$interface" = ide ] && machine=pc
    rm -f "$work/trace.img"
    "$bin/ett" qemu run --machine "$machine" --disk-interface "$interface" --disk "$work/trace.img" \
      --scenario "$work/one.scn" --append "mode=calibrate limit=0.3" --serial-log "$work/serial.log" \
      >"$work/run.log" 2>&1 || { cat "$work/run.log" >&2; exit 1; }
    rate=$(sed -n 's/.*ETT: dump complete: .* (\([0-9.]*\) MB\/s).*/\1/p' "$work/serial.log")
    echo "run $run: $interface $rate MB/s" >&2
    rates[$interface]="${rates[$interface]:-} $rate"
  done
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ide=$(echo "${rates[ide]}" | median)
printf "%-9s %-7s %11s %10s\n" interface machine "median MB/s" "x IDE"
for interface in ide ahci nvme; do
  machine=q35
  [ "$interface" = ide ] && machine=pc
  m=$(echo "${rates[$interface]}" | median)
  printf '%-9s %-7s %11s %9.1fx\n' "$interface" "$machine" "$m" "$(awk -v a="$m" -v b="$ide" 'BEGIN { print a / b }')"
done
