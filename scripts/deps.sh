#!/usr/bin/env bash
# deps.sh: installs the Debian packages ETT needs that are missing (idempotent; says what it installs).
# Uses apt-get, through sudo when not root. Package list: scripts/debian-packages.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t wanted < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/debian-packages.txt")

missing=()
for pkg in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = installed ] || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#wanted[@]} Debian packages are installed"
  exit 0
fi

if ! command -v apt-get >/dev/null; then
  echo "deps: missing packages (${missing[*]}) and no apt-get: ETT needs Debian 12" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo -n)
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "deps: done"
