// on_threads_test.cpp: every item runs once, the first on the caller's thread and the others beside it.
#include "common/on_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace ett::host {
namespace {

TEST(OnThreads, EveryItemRunsOnceAndItemZeroOnTheCallersThread) {
  for (size_t count : {0, 1, 2, 5}) {
    std::vector<std::atomic<int>> runs(count);
    std::vector<std::thread::id> ids(count);
    for_each_on_threads(count, [&](size_t i) {
      ++runs[i];
      ids[i] = std::this_thread::get_id();
    });
    for (size_t i = 0; i < count; ++i) EXPECT_EQ(runs[i].load(), 1) << "item " << i << " of " << count;
    if (count == 0) continue;
    EXPECT_EQ(ids[0], std::this_thread::get_id());
    EXPECT_EQ(std::set<std::thread::id>(ids.begin(), ids.end()).size(), count) << count << " items";
  }
}

TEST(OnThreads, ItemsRunAtTheSameTime) {
  // Each item waits until all have started: run one after another, the first would wait out its deadline.
  constexpr size_t kCount = 3;
  std::mutex mutex;
  std::condition_variable changed;
  size_t started = 0;
  std::vector<bool> saw_all(kCount, false);
  for_each_on_threads(kCount, [&](size_t i) {
    std::unique_lock lock(mutex);
    ++started;
    changed.notify_all();
    saw_all[i] = changed.wait_for(lock, std::chrono::seconds(30), [&] { return started == kCount; });
  });
  for (size_t i = 0; i < kCount; ++i) EXPECT_TRUE(saw_all[i]) << "item " << i;
}

}  // namespace
}  // namespace ett::host
