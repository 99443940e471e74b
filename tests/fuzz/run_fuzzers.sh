#!/usr/bin/env bash
# run_fuzzers.sh BUILD_DIR [TARGET...]: `make fuzz`: runs each libFuzzer target for $FUZZ_SECONDS (default 60) on
# its seed corpus (tests/fuzz/corpus/<target>, read only) plus a working corpus in BUILD_DIR/fuzz-corpus/<target>
# that keeps what the fuzzer found between runs. A crash input lands in BUILD_DIR/fuzz-artifacts/<target>/; fix the
# bug, then copy the input to tests/fuzz/regressions/<target>/ so that `make test` replays it.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: run_fuzzers.sh BUILD_DIR [TARGET...]}
shift
seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(trace_image serial_log scenario cmdline export_vcd)

# Longest input per target: one label, session header and two chunks for the image reader (two 32 KiB chunks
# after 9 sectors), a few dozen ETTX lines for the serial log, short texts for the rest.
max_len() {
  case $1 in
    trace_image) echo 75000 ;;
    serial_log) echo 16384 ;;
    *) echo 4096 ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=()
for target in "${targets[@]}"; do
  corpus=$build/fuzz-corpus/$target
  artifacts=$build/fuzz-artifacts/$target/
  mkdir -p "$corpus" "$artifacts"
  echo "== fuzz_$target: ${seconds}s"
  if ! "$build/bin/fuzz_$target" -max_total_time="$seconds" -max_len="$(max_len "$target")" -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$artifacts" "$corpus" "tests/fuzz/corpus/$target" \
      2>"$build/fuzz-$target.log"; then
    failed+=("$target")
    tail -n 40 "$build/fuzz-$target.log"
  fi
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+ *DONE' "$build/fuzz-$target.log" || true
  echo "   corpus: $(find "$corpus" -type f | wc -l) inputs found; artifacts: $(find "$artifacts" -type f | wc -l)"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found problems in: ${failed[*]} (inputs in $build/fuzz-artifacts/; logs in $build/fuzz-*.log)" >&2
  exit 1
fi
echo "fuzzing: no findings in ${targets[*]} (${seconds}s each)"
