#!/bin/sh
# hot_loop_check.sh: disassembles every capture-loop instantiation in ett-kernel.elf and fails if one has grown.
#
# Checks, per run_capture<...> (every layout, clock, source and filter setting): no call except the trigger
# wait (a separate pre-loop), no interrupt or I/O instruction other than the probe read and the stop checks,
# and at most MAX_INSNS instructions in all (the idle step is the handful quoted in capture_loop.h). Also that
# run_calibrate and run_hwlat have no call at all.
# Usage: hot_loop_check.sh ett-kernel.elf [objdump]
set -eu
ELF=$1
OBJDUMP=${2:-objdump}
MAX_INSNS=${MAX_INSNS:-560}  # 8x1, unrolled over 8 probes, is the largest (~490)
fail=0
count=0
for sym in $(nm "$ELF" | awk '$3 ~ /run_capture|run_calibrate|run_hwlat/ {print $3}'); do
  body=$("$OBJDUMP" -d --no-show-raw-insn --disassemble="$sym" "$ELF" | awk '/^ *[0-9a-f]+:\t/')
  insns=$(printf '%s\n' "$body" | wc -l)
  calls=$(printf '%s\n' "$body" | grep -P '\tcall' | grep -v wait_for_trigger || true)
  name=$(echo "$sym" | c++filt | cut -c1-110)
  count=$((count + 1))
  if [ -n "$calls" ]; then
    echo "FAIL: a call in $name:"; echo "$calls"; fail=1
  fi
  if [ "$insns" -gt "$MAX_INSNS" ]; then
    echo "FAIL: $name has $insns instructions (> $MAX_INSNS)"; fail=1
  fi
  if printf '%s\n' "$body" | grep -qP '\t(int|sti|hlt)\b'; then
    echo "FAIL: $name enables interrupts, halts or traps"; fail=1
  fi
done
if [ "$count" -lt 32 ]; then
  echo "FAIL: found only $count loop instantiations in $ELF (expected at least the 32 run_capture: 4 layouts x 2 clocks x 2 sources x filter on/off)"
  exit 1
fi
[ "$fail" -eq 0 ] && echo "hot loop check: $count loop instantiations, no calls, each <= $MAX_INSNS instructions"
exit $fail
