// on_threads.h: one thread per item, for work whose items are each big (a capture's or a probe's hundreds of
// MB).
#pragma once

#include <cstddef>
#include <thread>
#include <vector>

namespace ett::host {

// Runs work(i) once for every i < count: i = 0 on the caller's thread, each other i on a thread of its own;
// returns when all are done. work must not throw (an exception on a thread ends the process).
template <typename Work>
void for_each_on_threads(size_t count, const Work& work) {
  std::vector<std::thread> threads;
  threads.reserve(count > 0 ? count - 1 : 0);
  for (size_t i = 1; i < count; ++i) threads.emplace_back([&work, i] { work(i); });
  if (count > 0) work(0);
  for (std::thread& thread : threads) thread.join();
}

}  // namespace ett::host
