// The CPU engine's default memory limit reads the cgroup's limit files: "max" and v1's huge "no
// limit" mean none, a number is bytes, anything else is ignored rather than trusted.
#include "server/system_memory.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace rpt::server {
namespace {

class MemoryLimitFileTest : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    std::ofstream(path_) << text;
    return path_.string();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::filesystem::path path_ =
      std::filesystem::temp_directory_path() / ("rpt-memory-limit-" + std::to_string(getpid()));
};

TEST_F(MemoryLimitFileTest, ReadsBytesAndKnowsNoLimit) {
  EXPECT_EQ(read_memory_limit(write("2147483648\n")), std::optional<std::size_t>(2147483648));
  EXPECT_EQ(read_memory_limit(write("max\n")), std::nullopt);
  EXPECT_EQ(read_memory_limit(write("9223372036854771712\n")), std::nullopt);  // v1: unlimited
  EXPECT_EQ(read_memory_limit(write("12abc\n")), std::nullopt);
  EXPECT_EQ(read_memory_limit(write("")), std::nullopt);
  EXPECT_EQ(read_memory_limit(path_.string() + ".missing"), std::nullopt);
}

TEST(AvailableMemory, IsPositiveAndAtMostThePhysicalMemory) {
  const std::size_t physical = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                               static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
  const std::size_t available = available_memory_bytes();
  EXPECT_GT(available, 0u);
  EXPECT_LE(available, physical);
}

}  // namespace
}  // namespace rpt::server
