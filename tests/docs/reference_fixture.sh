#!/bin/sh
# reference_fixture.sh [qemu]: the files the examples of docs/reference/cli/*.md run on (tests/docs/run_examples.py
# runs it in each reference page's directory first). trace.img holds six synthetic sessions, loaded into
# traces.db as traces 1-6: session 2 is session 1's traffic stamped by a clock 40 ppm fast (a second PC's capture
# of the same lines, for `ett analyze align`). With `qemu`, a capture of demo.scn under QEMU is appended as
# session 7, with its sent log sent.csv (for `ett fidelity`). surveyed.img holds the survey of a made-up PC fit
# to measure (for `ett survey`).
set -e
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
ett synth trace.img --events 10000 --seed 1 > /dev/null
ett synth trace.img --events 10000 --seed 1 --clock-ppm 40 > /dev/null
for seed in 2 3 4 5; do ett synth trace.img --events 10000 --seed "$seed" > /dev/null; done
ett load trace.img --all --quiet > /dev/null
ett synth surveyed.img --survey fit > /dev/null
cp "$source_dir/qemu/scenarios/demo.scn" demo.scn
awk '$2 == 1' demo.scn > requests.scn
echo "SELECT trace_id, event_count FROM traces;" > query.sql
mkdir -p "$HOME/.local/share/bash-completion/completions" "$HOME/.config/fish/completions"
if [ "$1" = qemu ]; then
  ett qemu run --disk trace.img --scenario demo.scn --sent-log sent.csv --quiet > /dev/null
fi
