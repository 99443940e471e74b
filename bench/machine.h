// machine.h: what the benchmarks print about the machine they run on: its load, and what memory that no
// process has touched for a while costs it.
#pragma once

#include <cstddef>
#include <string>

namespace ett::bench {

// "0.92 1.06 1.36": the 1, 5 and 15 minute load averages (/proc/loadavg).
std::string load_average();

// Seconds to touch `bytes` of fresh anonymous memory (huge pages advised, as the ett binary does for its big
// blocks): the kernel's zeroing, and on a virtual machine whatever its host does to back the pages again;
// negative when the memory cannot be mapped.
double touch_seconds(size_t bytes);

// "fresh memory: 1 GiB touched in A s, again right after in B s": a GiB touched once, then again at once
// (into the pages just freed). On a virtual machine whose host takes back the memory its guest leaves free,
// A is far above B, and a command's first touch of its memory costs it that much more.
std::string fresh_memory_line();

}  // namespace ett::bench
