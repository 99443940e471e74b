#!/bin/sh
# deb_test.sh BUILD_DIR: `make deb`'s package (CPack) unpacked into a scratch root (dpkg -x): its ett names its
# version and commit, finds its own kernel in /usr/lib/ett and captures two signals sent by `ett signal` under
# --run, found on PATH because qemu run puts the running ett's directory there.
set -eu
build=$(cd "$1" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
(cd "$build" && cpack -G DEB -B "$scratch/package" >/dev/null)
deb=$(find "$scratch/package" -maxdepth 1 -name 'ett_*.deb')
dpkg-deb -f "$deb" Depends | grep -q qemu-system-x86
dpkg -x "$deb" "$scratch/unpacked"
ett="$scratch/unpacked/usr/bin/ett"
"$ett" --version | grep -q '(git '
[ -f "$scratch/unpacked/usr/lib/ett/ett-kernel.elf" ]
cd "$scratch"
PATH=/usr/bin:/bin "$ett" -q qemu run --disk t.img --run 'ett signal "$ETT_PROBE_URL" 1 3 && ett signal "$ETT_PROBE_URL" 2 5' >/dev/null
"$ett" extract t.img -o - >events.csv
[ "$(sed -n '2p;3p' events.csv | cut -d, -f2,3 | tr '\n' ' ')" = "1,3 2,5 " ]
echo "deb test: ok"
