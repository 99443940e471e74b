#!/bin/sh
# hot_loop_check.sh: disassembles every capture-loop instantiation in a kernel ELF (ett-kernel.elf, or the
# x86-64 kernel's ett-kernel64.debug.elf) and checks its idle step.
#
# Per run_capture<...> (every layout, clock, source and filter setting):
#   - the idle step (the loop from arch/x86/idle_poll.h: the backward branch whose loop holds the probe read)
#     is there, is exactly IDLE_INSNS instructions (5; 7 with filter=), and touches memory or I/O only in
#     the probe read: `movzbl (%reg),%reg` or `in (%dx),%al` -- no stack slot, no reloaded mask or port;
#   - no call except the trigger wait (a separate pre-loop) and the stall log's recorder (only after a
#     stall, in the stop check); no interrupt, halt or trap;
#   - at most MAX_INSNS instructions in all.
# Also that run_calibrate and run_hwlat have no call but the stall recorder.
# Usage: hot_loop_check.sh ett-kernel.elf [objdump]
set -eu
ELF=$1
OBJDUMP=${2:-objdump}
MAX_INSNS=${MAX_INSNS:-640}  # 8x1, unrolled over 8 probes, with the stop check's stall bookkeeping (~590)
fail=0
count=0
idle_checked=0
for sym in $(nm "$ELF" | awk '$3 ~ /run_capture|run_calibrate|run_hwlat/ {print $3}'); do
  body=$("$OBJDUMP" -d --no-show-raw-insn --disassemble="$sym" "$ELF" | awk '/^ *[0-9a-f]+:\t/')
  insns=$(printf '%s\n' "$body" | wc -l)
  calls=$(printf '%s\n' "$body" | grep -P '\tcall' | grep -v -e wait_for_trigger -e StallLog6record || true)
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
  case "$sym" in *run_capture*) ;; *) continue ;; esac
  # Filtered instantiations are run_capture<Layout, true, ...>: mangled "...LayoutE<n>ELb1E".
  case "$sym" in *ELb1E*) want=7 ;; *) want=5 ;; esac
  # The idle step: the shortest loop closed by a backward jne whose first instruction is the probe read.
  idle=$(printf '%s\n' "$body" | awk '
    function hex(s,   v, k) { v = 0; for (k = 1; k <= length(s); ++k) v = v * 16 + index("0123456789abcdef", substr(s, k, 1)) - 1; return v }
    { addr = hex(substr($1, 1, length($1) - 1)); line[NR] = $0; at[NR] = addr; index_of[addr] = NR }
    $2 ~ /^(jne|jnz)$/ { target[NR] = hex($3) }
    END {
      best = 0
      for (key in target) {
        i = key + 0
        t = target[key]
        if (!(t in index_of) || t >= at[i]) continue
        first = index_of[t]
        if (line[first] !~ /\t(movzbl +(0x0)?\(%[er][a-z0-9]+\),%(e[a-z]+|r[0-9]+d)|in +\(%dx\),%al)$/) continue
        if (best == 0 || i - first < best_len) { best = i; best_len = i - first; best_first = first }
      }
      if (best) for (k = best_first; k <= best; ++k) print line[k]
    }')
  if [ -z "$idle" ]; then
    echo "FAIL: no idle step (a loop starting at the probe read) found in $name"; fail=1; continue
  fi
  n=$(printf '%s\n' "$idle" | wc -l)
  if [ "$n" -ne "$want" ]; then
    echo "FAIL: the idle step of $name has $n instructions (expected $want):"; echo "$idle"; fail=1
  fi
  # Memory or I/O besides the read (the first instruction): any operand in parentheses, or an in/out.
  other=$(printf '%s\n' "$idle" | tail -n +2 | grep -P '\(|\t(in|out)[bwl]? ' || true)
  if [ -n "$other" ]; then
    echo "FAIL: the idle step of $name touches memory or I/O besides the probe read:"; echo "$other"; fail=1
  fi
  idle_checked=$((idle_checked + 1))
done
if [ "$count" -lt 32 ] || [ "$idle_checked" -lt 32 ]; then
  echo "FAIL: found $count loop instantiations, checked $idle_checked idle steps in $ELF (expected at least the 32 run_capture: 4 layouts x 2 clocks x 2 sources x filter on/off)"
  exit 1
fi
[ "$fail" -eq 0 ] && echo "hot loop check: $count loop instantiations, no calls, each <= $MAX_INSNS instructions; $idle_checked idle steps of 5 (7 with filter=) instructions, no memory access but the probe read"
exit $fail
