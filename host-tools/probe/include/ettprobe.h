/* ettprobe.h: libettprobe, the target-side end of the ETT probe cable: put a code on a probe's lines. */
#ifndef ETTPROBE_H
#define ETTPROBE_H

/* The library is built with hidden visibility; only these functions are exported from libettprobe.so. */
#if defined(__GNUC__)
#define ETTPROBE_API __attribute__((visibility("default")))
#else
#define ETTPROBE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* One open probe cable: the eight data lines, split into probes by a layout (2x4 unless the URL says). */
typedef struct ett_probe ett_probe;

/* Opens the cable named by URL; NULL on error (see ett_probe_last_error).
 *   shm:PATH or ivshmem:PATH   the QEMU virtual probe file that `ett qemu run` creates ($ETT_PROBE_URL)
 *   ppdev:/dev/parportN        a parallel port through Linux ppdev (claimed until ett_probe_close)
 * followed by optional ?key=value&key=value:
 *   layout=2x4|8x1|4x2|1x8     how the lines split into probes (default 2x4, as the kernel's layout=)
 *   log=FILE                   append one CSV line per signal (default: $ETT_PROBE_LOG, if set)
 *   pace=1|0                   shm only: wait until the kernel has polled since this cable's previous write
 *                              before writing (default 1), so that back-to-back signals are never merged */
ETTPROBE_API ett_probe* ett_probe_open(const char* url);

/* Puts CODE on PROBE's lines (probe from 1), leaving the other probes' lines as they are, even when other
 * processes signal on other probes of the same cable at the same moment. Returns 0, or -1 on error: probe or
 * code out of range for the layout, the probe already shows CODE (no change the kernel could see), I/O. */
ETTPROBE_API int ett_probe_signal(ett_probe* probe, int probe_number, int code);

/* Probes under the cable's layout (2, 8, 4 or 1) and the largest code a probe can show (15, 1, 3, 255). */
ETTPROBE_API int ett_probe_count(const ett_probe* probe);
ETTPROBE_API int ett_probe_max_code(const ett_probe* probe);

/* The eight lines D7..D0 as this cable last wrote or saw them. */
ETTPROBE_API unsigned ett_probe_lines(const ett_probe* probe);

/* Releases the cable (ppdev: PPRELEASE); NULL is allowed. Returns 0, or -1 when closing failed. */
ETTPROBE_API int ett_probe_close(ett_probe* probe);

/* The message of the last failed call in this thread ("" when none); valid until the next call. */
ETTPROBE_API const char* ett_probe_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* ETTPROBE_H */
