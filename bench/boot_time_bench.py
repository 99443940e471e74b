#!/usr/bin/env python3
"""boot_time_bench.py: boot-to-capturing time of the GRUB ISO under SeaBIOS and under OVMF (QEMU TCG).

Prints numbers; it is not a timed test. Each run starts QEMU the way `ett qemu run --iso ISO --firmware F` does
(-M pc, the ivshmem probe, a trace disk on IDE; OVMF: qemu-system-x86_64 with Debian's OVMF_CODE_4M.fd, a
copy of its variable store and no network card) and timestamps the serial lines as they arrive: QEMU start -> the kernel's first line
("ETT: capture kernel") -> "ETT: capturing". The kernel's own "N ms after kernel entry" is reported as well.
Usage: bench/boot_time_bench.py [BIN_DIR] [RUNS]   (default build/bin, 3 runs per firmware)
"""
import os, re, shutil, statistics, subprocess, sys, tempfile, time

bin_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "build", "bin")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
iso = os.path.join(bin_dir, "ett.iso")
OVMF_CODE = "/usr/share/OVMF/OVMF_CODE_4M.fd"
OVMF_VARS = "/usr/share/OVMF/OVMF_VARS_4M.fd"


def boot(tmp, firmware):
    disk = os.path.join(tmp, "trace.img")
    subprocess.run([os.path.join(bin_dir, "ett"), "mkdisk", disk, "--size", "4M"], check=True,
                   capture_output=True)
    shm = "/dev/shm/ett-boot-bench-%d" % os.getpid()
    with open(shm, "wb") as f:
        f.truncate(1 << 20)
    args = ["qemu-system-x86_64" if firmware == "uefi" else "qemu-system-i386", "-M", "pc", "-accel", "tcg",
            "-m", "256", "-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot",
            "-object", "memory-backend-file,id=shm0,mem-path=%s,size=1M,share=on" % shm,
            "-device", "ivshmem-plain,memdev=shm0", "-drive", "file=%s,format=raw,if=ide,index=0" % disk,
            "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04", "-cdrom", iso, "-boot", "d"]
    if firmware == "uefi":
        vars_copy = os.path.join(tmp, "vars.fd")
        shutil.copyfile(OVMF_VARS, vars_copy)
        args += ["-drive", "if=pflash,format=raw,readonly=on,file=" + OVMF_CODE,
                 "-drive", "if=pflash,format=raw,file=" + vars_copy, "-nic", "none"]
    start = time.monotonic()
    qemu = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    kernel_s = capturing_s = None
    kernel_ms = None
    buffer = b""
    try:
        while capturing_s is None:
            chunk = qemu.stdout.read1(4096)
            if not chunk:
                break
            buffer += chunk
            now = time.monotonic() - start
            if kernel_s is None and b"ETT: capture kernel" in buffer:
                kernel_s = now
            m = re.search(rb"ETT: capturing: .*, (\d+) ms after kernel entry", buffer)
            if m:
                capturing_s, kernel_ms = now, int(m.group(1))
    finally:
        qemu.kill()
        qemu.wait()
        os.unlink(shm)
    if capturing_s is None:
        sys.exit("%s: the kernel never reported capturing:\n%s" % (firmware, buffer.decode(errors="replace")))
    return kernel_s, capturing_s, kernel_ms


for firmware in ("bios", "uefi"):
    results = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            results.append(boot(tmp, firmware))
    to_kernel = statistics.median(r[0] for r in results)
    to_capture = statistics.median(r[1] for r in results)
    in_kernel = statistics.median(r[2] for r in results)
    print("%-4s  QEMU start -> kernel %.2f s, -> capturing %.2f s (kernel entry -> capturing %d ms); "
          "median of %d: %s" % (firmware, to_kernel, to_capture, in_kernel, runs,
                                ", ".join("%.2f" % r[1] for r in results)))
