#!/usr/bin/env bash
# make-iso.sh: builds the bootable GRUB ISO (BIOS) holding the capture kernel and the ETT boot menu.
# usage: make-iso.sh KERNEL_ELF GRUB_CFG OUTPUT_ISO
set -euo pipefail
if [ $# -ne 3 ]; then echo "usage: $0 KERNEL_ELF GRUB_CFG OUTPUT_ISO" >&2; exit 2; fi
kernel=$1 cfg=$2 out=$3
for f in "$kernel" "$cfg"; do [ -f "$f" ] || { echo "make-iso: missing $f" >&2; exit 1; }; done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/boot/grub"
cp "$kernel" "$stage/boot/ett-kernel.elf"
cp "$cfg" "$stage/boot/grub/grub.cfg"
log=$(mktemp)
# BIOS only (i386-pc): measurement PCs boot in legacy mode so that the parallel port and IDE are reachable.
if ! grub-mkrescue -d /usr/lib/grub/i386-pc -o "$out.tmp" "$stage" >"$log" 2>&1; then
  cat "$log" >&2; rm -f "$log" "$out.tmp"; echo "make-iso: grub-mkrescue failed" >&2; exit 1
fi
rm -f "$log"
mv "$out.tmp" "$out"
