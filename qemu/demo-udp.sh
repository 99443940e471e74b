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
