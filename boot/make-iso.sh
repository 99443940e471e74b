#!/usr/bin/env bash
# make-iso.sh: builds the bootable GRUB ISO holding the capture kernel and the ETT boot menu: one hybrid image
# for BIOS (i386-pc, El Torito and an MBR) and UEFI (x86_64-efi, an EFI system partition), from a CD or
# written raw to a USB stick.
# usage: make-iso.sh KERNEL_ELF GRUB_CFG OUTPUT_ISO [KERNEL64_ELF]
# KERNEL64_ELF: the x86-64 kernel (ett-kernel64.elf), which grub.cfg boots on a CPU with long mode.
set -euo pipefail
if [ $# -ne 3 ] && [ $# -ne 4 ]; then echo "usage: $0 KERNEL_ELF GRUB_CFG OUTPUT_ISO [KERNEL64_ELF]" >&2; exit 2; fi
kernel=$1 cfg=$2 out=$3 kernel64=${4:-}
for f in "$kernel" "$cfg" ${kernel64:+"$kernel64"}; do [ -f "$f" ] || { echo "make-iso: missing $f" >&2; exit 1; }; done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/boot/grub"
# The kernel without its symbols and debug information (85 % of the ELF file): GRUB's multiboot loaders read
# every section of the file, and the BIOS one reads through the firmware's CD driver, which under QEMU's TCG
# took 2.8 s for the 1.5 MB ELF and 0.4 s for the stripped one. The build's ett-kernel.elf keeps them.
objcopy=$(command -v i686-linux-gnu-objcopy || command -v objcopy || true)
[ -n "$objcopy" ] || { echo "make-iso: no objcopy (binutils-i686-linux-gnu, scripts/deps.sh)" >&2; exit 1; }
"$objcopy" --strip-all "$kernel" "$stage/boot/ett-kernel.elf"
if [ -n "$kernel64" ]; then
  # The ELF32 wrapper of the x86-64 kernel: i686 objcopy reads it too.
  "$objcopy" --strip-all "$kernel64" "$stage/boot/ett-kernel64.elf"
fi
cp "$cfg" "$stage/boot/grub/grub.cfg"
log=$(mktemp)
# Both GRUB platforms (grub-pc-bin, grub-efi-amd64-bin); no locales, themes or extra fonts: the menu is
# plain text and the image stays small.
for platform in i386-pc x86_64-efi; do
  [ -d "/usr/lib/grub/$platform" ] || { echo "make-iso: GRUB $platform is not installed (scripts/deps.sh)" >&2; exit 1; }
done
# The modules every boot needs go into GRUB's core image of each platform (their dependencies follow): loaded
# one file at a time from the CD they cost 0.2-1.4 s under TCG. efi_gop and efi_uga exist only for UEFI:
# grub.cfg loads them there.
modules="normal terminal terminfo serial test smbios multiboot2 cpuid"
if ! grub-mkrescue --locales= --themes= --fonts= --modules="$modules" -o "$out.tmp" "$stage" >"$log" 2>&1; then
  cat "$log" >&2; rm -f "$log" "$out.tmp"; echo "make-iso: grub-mkrescue failed" >&2; exit 1
fi
rm -f "$log"
mv "$out.tmp" "$out"
