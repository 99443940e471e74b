// shared_memory_test.cpp: the virtual probe's /dev/shm file is zeroed, mapped and removed again.
#include "harness/shared_memory.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace ett::host {
namespace {

TEST(SharedMemoryFile, CreatesZeroedFileAndRemovesIt) {
  std::string path;
  {
    auto shm = SharedMemoryFile::create();
    ASSERT_TRUE(shm.ok()) << shm.error().message;
    path = shm->path();
    EXPECT_EQ(path.rfind("/dev/shm/ett-", 0), 0u);
    EXPECT_EQ(::access(path.c_str(), F_OK), 0);
    for (size_t i = 0; i < vprobe::kMinSize; i += 4096) EXPECT_EQ(shm->data()[i], 0);
    EXPECT_EQ(shm->control()->magic, 0u);
    EXPECT_EQ(shm->control()->host_magic, vprobe::kHostMagic);  // marks it as a probe file for libettprobe
    EXPECT_EQ(shm->control()->file_version, vprobe::kFileVersion);
  }
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace ett::host
