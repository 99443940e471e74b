#!/bin/sh
# install_test.sh BUILD_DIR: `cmake --install` into a scratch prefix, then a small C program built against the
# installed libettprobe once with pkg-config and once with CMake's find_package, and the installed ett run.
set -eu
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
prefix="$scratch/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

"$prefix/bin/ett" --version | grep -q '(git '
# The manual pages, compressed (gzip -9n); a page per verb (ett man VERB), the verb's subverbs in it.
gzip -dc "$prefix/share/man/man1/ett.1.gz" | head -1 | grep -q '^.TH ETT 1'
gzip -dc "$prefix/share/man/man1/ett-analyze.1.gz" | head -1 | grep -q '^.TH ETT\\-ANALYZE 1'
gzip -dc "$prefix/share/man/man1/ett-analyze.1.gz" | grep -q 'ett analyze durations'
bash -n "$prefix/share/bash-completion/completions/ett"

cp "$here/probe_user.c" "$scratch/probe_user.c"
libdir=$(dirname "$(find "$prefix" -name ettprobe.pc)")
PKG_CONFIG_PATH="$libdir" cc -o "$scratch/with_pkgconfig" "$scratch/probe_user.c" \
  $(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs ettprobe)
LD_LIBRARY_PATH="$(dirname "$libdir")" "$scratch/with_pkgconfig" | grep -q 'cannot open the virtual probe file'

mkdir "$scratch/cmake_user"
cp "$scratch/probe_user.c" "$scratch/cmake_user/"
cat >"$scratch/cmake_user/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.20)
project(probe_user C)
find_package(ettprobe REQUIRED)
add_executable(probe_user probe_user.c)
target_link_libraries(probe_user PRIVATE ettprobe::ettprobe)
C
cmake -S "$scratch/cmake_user" -B "$scratch/cmake_user/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$scratch/cmake_user/build" >/dev/null
"$scratch/cmake_user/build/probe_user" | grep -q 'cannot open the virtual probe file'
echo "install test: ok"
