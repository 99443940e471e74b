#!/usr/bin/env bash
# make-iso.sh: builds the bootable GRUB ISO holding the capture kernel and the ETT boot menu: one hybrid image
# for BIOS (i386-pc, El Torito and an MBR) and UEFI (x86_64-efi, an EFI system partition), from a CD or
# written raw to a USB stick.
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
# Both GRUB platforms (grub-pc-bin, grub-efi-amd64-bin); no locales, themes or extra fonts: the menu is
# plain text and the image stays small.
for platform in i386-pc x86_64-efi; do
  [ -d "/usr/lib/grub/$platform" ] || { echo "make-iso: GRUB $platform is not installed (scripts/deps.sh)" >&2; exit 1; }
done
if ! grub-mkrescue --locales= --themes= --fonts= -o "$out.tmp" "$stage" >"$log" 2>&1; then
  cat "$log" >&2; rm -f "$log" "$out.tmp"; echo "make-iso: grub-mkrescue failed" >&2; exit 1
fi
rm -f "$log"
mv "$out.tmp" "$out"
