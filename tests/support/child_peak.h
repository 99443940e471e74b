// child_peak.h: the peak memory of a piece of work, run in a child process of its own (fork, wait4's
// ru_maxrss), for tests that a command's memory does not grow with its input.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

namespace ett::test {

// Under AddressSanitizer a process's resident set also holds the freed memory it quarantines (up to 256 MB),
// so its peak says nothing about what the code keeps.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kPeaksAreMeaningful = false;
#else
inline constexpr bool kPeaksAreMeaningful = true;
#endif

// Runs `body` in a forked child and returns the child's peak resident set in KiB; -1 when `body` returned
// false or the child did not exit normally. The child starts with the parent's pages, so compare two children
// forked one after the other, not a child with a constant.
inline long child_peak_rss_kib(const std::function<bool()>& body) {
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) ::_exit(body() ? 0 : 1);
  int status = 0;
  rusage usage{};
  if (::wait4(child, &status, 0, &usage) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return -1;
  return usage.ru_maxrss;
}

}  // namespace ett::test
