#!/bin/sh
# deb_test.sh BUILD_DIR WITH_PYTHON: `make deb`'s packages (CPack, cmake/packaging.cmake) built into a scratch
# directory, checked by lintian (no error, no warning but the overridden ones), unpacked into a scratch root
# (dpkg -x) and used from there: ett names its version and commit, its manual page reads, a C program builds
# against libettprobe with find_package(ettprobe 0.1) and with pkg-config (shared and --static), the Python package
# imports (WITH_PYTHON=1: the build has the module, so python3-ett must have been made), and the ett-kernel
# package's kernel captures two signals sent by `ett signal` under --run.
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
with_python=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() {
  echo "deb test: $*" >&2
  exit 1
}
packages="$scratch/package"
(cd "$build" && cpack -G DEB -B "$packages" >"$scratch/cpack.log" 2>&1) || {
  cat "$scratch/cpack.log"
  fail "cpack failed"
}
one() { # one GLOB: the one package file that matches
  set -- "$packages"/$1
  [ $# -eq 1 ] && [ -f "$1" ] || fail "no single package $(basename "$1") in: $(ls "$packages")"
  echo "$1"
}
ett_deb=$(one 'ett_*_amd64.deb')
kernel_deb=$(one 'ett-kernel_*_all.deb')
lib_deb=$(one 'libettprobe[0-9]*_*.deb')
dev_deb=$(one 'libettprobe-dev_*.deb')
one 'ett-dbgsym_*.ddeb' >/dev/null
one 'libettprobe[0-9]*-dbgsym_*.ddeb' >/dev/null
if [ "$with_python" = 1 ]; then
  one 'python3-ett_*.deb' >/dev/null
  one 'python3-ett-dbgsym_*.ddeb' >/dev/null
elif ls "$packages"/python3-ett_* >/dev/null 2>&1; then
  fail "python3-ett made without the Python module in the build"
fi

# Analysis needs no QEMU: the emulator, its firmware and the kernel are recommended, not required.
if dpkg-deb -f "$ett_deb" Depends | grep -q 'qemu\|ovmf\|ett-kernel'; then
  fail "ett depends on $(dpkg-deb -f "$ett_deb" Depends)"
fi
dpkg-deb -f "$ett_deb" Recommends | grep -q 'qemu-system-x86' || fail "ett does not recommend qemu-system-x86"
# libettprobeN declares its library (shlibs), for dpkg-shlibdeps of the packages that link it.
dpkg-deb --ctrl-tarfile "$lib_deb" | tar -xO ./shlibs | grep "^libettprobe [0-9]* $(basename "$lib_deb" | cut -d_ -f1) (>= " >/dev/null

# lintian: every package, errors and warnings fail (overrides, with their reasons, in packaging/*.lintian-overrides).
lintian --fail-on error,warning --tag-display-limit 0 "$packages"/*.deb "$packages"/*.ddeb >"$scratch/lintian.log" 2>&1 || {
  cat "$scratch/lintian.log"
  fail "lintian failed"
}

root="$scratch/root"
for deb in "$packages"/*.deb "$packages"/*.ddeb; do dpkg -x "$deb" "$root"; done
ett="$root/usr/bin/ett"
"$ett" --version | grep -q '(git '
# The stripped ett, its debug information in ett-dbgsym under its build id.
file "$ett" | grep -q ', stripped' || fail "ett is not stripped: $(file "$ett")"
[ -f "$root/usr/lib/debug/.build-id/$(readelf -n "$ett" | sed -n 's/.*Build ID: \(..\)\(.*\)/\1\/\2/p').debug" ] ||
  fail "no debug file for ett's build id in ett-dbgsym"
MANPATH="$root/usr/share/man" MANWIDTH=80 man -P cat ett 2>/dev/null | grep -q 'ett analyze' || fail "man ett"
for package in $(ls "$packages" | sed -n 's/_.*\.deb$//p'); do
  [ -f "$root/usr/share/doc/$package/copyright" ] && [ -f "$root/usr/share/doc/$package/changelog.Debian.gz" ] ||
    fail "$package: no copyright or changelog.Debian.gz"
done
grep -q 'Leon Sorokin' "$root/usr/share/doc/ett/copyright"
[ -f "$root/usr/share/ett/perfetto_trace.proto" ] && dpkg-deb -c "$dev_deb" | grep 'perfetto_trace.proto$' >/dev/null

if [ "$with_python" = 1 ]; then
  PYTHONPATH="$root/usr/lib/python3/dist-packages" /usr/bin/python3 -c "import ett; print(ett.__file__)" |
    grep -q "^$root/usr/lib/python3/dist-packages/ett/" || fail "import ett from python3-ett"
fi

# A C program against libettprobe: with pkg-config (shared, then fully static: the C++ library needs -lstdc++
# from Libs.private), and with CMake's find_package(ettprobe 0.1) (and not found for a version it is not).
cp "$here/probe_user.c" "$scratch/probe_user.c"
export PKG_CONFIG_PATH="$root/usr/lib/pkgconfig"
cc -o "$scratch/shared" "$scratch/probe_user.c" $(pkg-config --cflags --libs ettprobe)
LD_LIBRARY_PATH="$root/usr/lib" ldd "$scratch/shared" | grep -q "libettprobe.so.[0-9]* => $root/usr/lib/"
LD_LIBRARY_PATH="$root/usr/lib" "$scratch/shared" | grep -q 'cannot open the virtual probe file'
# -static: the linker takes libettprobe.a, and the C++ run-time it needs comes from Libs.private.
cc -static -o "$scratch/static" "$scratch/probe_user.c" $(pkg-config --static --cflags --libs ettprobe) 2>"$scratch/cc.log" ||
  { cat "$scratch/cc.log"; fail "static link with pkg-config --static"; }
"$scratch/static" | grep -q 'cannot open the virtual probe file'

mkdir "$scratch/cmake_user"
cp "$scratch/probe_user.c" "$scratch/cmake_user/"
cat >"$scratch/cmake_user/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.20)
project(probe_user C)
find_package(ettprobe 99 QUIET)
if(ettprobe_FOUND)
  message(FATAL_ERROR "find_package(ettprobe 99) found version ${ettprobe_VERSION}")
endif()
find_package(ettprobe 0.1 REQUIRED)
add_executable(probe_user probe_user.c)
target_link_libraries(probe_user PRIVATE ettprobe::ettprobe)
C
cmake -S "$scratch/cmake_user" -B "$scratch/cmake_user/build" -DCMAKE_PREFIX_PATH="$root/usr" >"$scratch/cmake.log" ||
  { cat "$scratch/cmake.log"; fail "find_package(ettprobe 0.1)"; }
cmake --build "$scratch/cmake_user/build" >/dev/null
LD_LIBRARY_PATH="$root/usr/lib" "$scratch/cmake_user/build/probe_user" | grep -q 'cannot open the virtual probe file'

# The capture: ett finds its kernel in /usr/lib/ett (ett-kernel), and `ett signal` on PATH because qemu run puts
# the running ett's directory there.
[ -f "$root/usr/lib/ett/ett-kernel.elf" ] && dpkg-deb -c "$kernel_deb" | grep 'ett-kernel.elf$' >/dev/null
cd "$scratch"
PATH=/usr/bin:/bin "$ett" -q qemu run --disk t.img --run 'ett signal "$ETT_PROBE_URL" 1 3 && ett signal "$ETT_PROBE_URL" 2 5' >/dev/null
"$ett" extract t.img -o - >events.csv
[ "$(sed -n '2p;3p' events.csv | cut -d, -f2,3 | tr '\n' ' ')" = "1,3 2,5 " ]
echo "deb test: ok"
