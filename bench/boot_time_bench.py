#!/usr/bin/env python3
"""boot_time_bench.py: boot-to-capturing time of the GRUB ISO under SeaBIOS and under OVMF (QEMU TCG).

Prints numbers; it is not a timed test. Each run starts QEMU the way `ett qemu run --iso ISO --firmware F` does
(-M pc, the ivshmem probe, a trace disk on IDE; OVMF: qemu-system-x86_64 with Debian's OVMF_CODE_4M.fd, a
copy of its variable store and no network card), once on plain TCG (`--clock host`) and once with the
-icount of `--clock guest`, and timestamps the serial lines as they arrive: QEMU start -> GRUB starts the menu
entry ("Booting `...'") -> the kernel's first line ("ETT: capture kernel") -> "ETT: capturing". The kernel's
own "N ms after kernel entry" and the CPU time QEMU used until "capturing" (less disturbed by other load
than the wall-clock time) are reported as well, and the load average at the start.
Usage: bench/boot_time_bench.py [BIN_DIR] [RUNS]   (default build/bin, 3 runs per firmware and clock)
"""
import os, re, shutil, statistics, subprocess, sys, tempfile, time

bin_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "build", "bin")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
iso = os.path.join(bin_dir, "ett.iso")
OVMF_CODE = "/usr/share/OVMF/OVMF_CODE_4M.fd"
OVMF_VARS = "/usr/share/OVMF/OVMF_VARS_4M.fd"
ICOUNT = ["-icount", "shift=2,sleep=off"]  # what host-tools/harness/qemu_command.cpp gives --clock guest


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def boot(tmp, firmware, icount):
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
    if icount:
        args += ICOUNT
    start = time.monotonic()
    qemu = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    menu_s = kernel_s = capturing_s = kernel_ms = cpu_s = None
    buffer = b""
    try:
        while capturing_s is None:
            chunk = qemu.stdout.read1(4096)
            if not chunk:
                break
            buffer += chunk
            now = time.monotonic() - start
            if menu_s is None and b"Booting `" in buffer:
                menu_s = now
            if kernel_s is None and b"ETT: capture kernel" in buffer:
                kernel_s = now
            m = re.search(rb"ETT: capturing: .*, (\d+) ms after kernel entry", buffer)
            if m:
                capturing_s, kernel_ms = now, int(m.group(1))
                cpu_s = cpu_seconds(qemu.pid)
    finally:
        qemu.kill()
        qemu.wait()
        os.unlink(shm)
    if capturing_s is None:
        sys.exit("%s: the kernel never reported capturing:\n%s" % (firmware, buffer.decode(errors="replace")))
    return menu_s, kernel_s, capturing_s, kernel_ms, cpu_s


print("load average at the start: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))
print("median of %d runs each; QEMU start -> GRUB menu entry -> kernel -> capturing" % runs)
for icount in (False, True):
    for firmware in ("bios", "uefi"):
        results = []
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as tmp:
                results.append(boot(tmp, firmware, icount))
        median = [statistics.median(r[i] for r in results) for i in range(5)]
        print("%-4s %-13s  menu entry %5.2f s, kernel %5.2f s, capturing %5.2f s (kernel entry -> capturing "
              "%d ms; QEMU CPU %.2f s); runs: %s" %
              (firmware, "-icount" if icount else "plain TCG", median[0], median[1], median[2], median[3],
               median[4], ", ".join("%.2f" % r[2] for r in results)))
