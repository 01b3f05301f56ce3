// ChoiceFile: the persisted autotuning choices. Round trip, stamps kept apart, malformed and hostile content
// skipped, failed appends harmless, concurrent appends whole.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/choice_file.h"
#include "core/fault.h"
#include "util/scratch.h"

namespace dacpp {
namespace {

class ChoiceFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::scratch_path_for_test("choices");
    std::remove(path_.c_str());
  }
  void TearDown() override {
    fault::configure("");
    std::remove(path_.c_str());
  }
  void write_raw(const std::string& text) {
    std::ofstream out(path_, std::ios::binary | std::ios::app);
    out << text;
  }
  std::string path_;
};

TEST_F(ChoiceFileTest, MissingFileIsEmpty) {
  EXPECT_TRUE(ChoiceFile(path_, "gpu A").load().empty());
}

TEST_F(ChoiceFileTest, RoundTripKeepsTheFirstChoiceOfAKey) {
  const ChoiceFile f(path_, "NVIDIA H200|sm90|cublasLt 130000");
  f.append("conv2d 1,256,148,148,256,3,3,148,148,1,1,1,1,0,0,bf16,1,0", 4);
  f.append("[gemm,1024,1370,1024,1,0]", 3);
  f.append("attention 1,16,1370,1370,64,bf16,packed", 0);
  f.append("[gemm,1024,1370,1024,1,0]", 7);  // a later choice for a stored key does not replace it
  const auto m = ChoiceFile(path_, "NVIDIA H200|sm90|cublasLt 130000").load();
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m.at("conv2d 1,256,148,148,256,3,3,148,148,1,1,1,1,0,0,bf16,1,0"), 4);
  EXPECT_EQ(m.at("[gemm,1024,1370,1024,1,0]"), 3);
  EXPECT_EQ(m.at("attention 1,16,1370,1370,64,bf16,packed"), 0);
}

TEST_F(ChoiceFileTest, OtherStampsAreIgnored) {
  ChoiceFile(path_, "gpu A").append("k", 1);
  ChoiceFile(path_, "gpu B").append("k", 2);
  EXPECT_EQ(ChoiceFile(path_, "gpu A").load().at("k"), 1);
  EXPECT_EQ(ChoiceFile(path_, "gpu B").load().at("k"), 2);
  EXPECT_TRUE(ChoiceFile(path_, "gpu C").load().empty());
}

TEST_F(ChoiceFileTest, MalformedLinesAreSkipped) {
  write_raw(
      "dacpp-choice-v1\tS\tgood\t5\n"
      "garbage\n"
      "dacpp-choice-v1\tS\tnegative\t-1\n"
      "dacpp-choice-v1\tS\tword\tfive\n"
      "dacpp-choice-v1\tS\ttrailing\t5x\n"
      "dacpp-choice-v1\tS\thuge\t99999999999999999999\n"
      "dacpp-choice-v1\tS\t\t3\n"
      "dacpp-choice-v1\tS\textra\t1\t2\n"
      "dacpp-choice-v0\tS\told\t1\n"
      "\n" +
      std::string("dacpp-choice-v1\tS\tlong\t1") + std::string(ChoiceFile::kMaxLineBytes, ' ') + "\n" +
      "dacpp-choice-v1\tS\tpartial\t");  // a line cut short by a crash
  const auto m = ChoiceFile(path_, "S").load();
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.at("good"), 5);
}

TEST_F(ChoiceFileTest, BinaryContentIsSkipped) {
  std::string junk(10000, '\0');
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 131) % 256);
  write_raw(junk);
  write_raw("\ndacpp-choice-v1\tS\tk\t2\n");
  const auto m = ChoiceFile(path_, "S").load();
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.at("k"), 2);
}

TEST_F(ChoiceFileTest, UnstorableKeysAreNotWritten) {
  const ChoiceFile f(path_, "S");
  f.append("tab\tkey", 1);
  f.append("new\nline", 1);
  f.append("", 1);
  f.append("negative", -3);
  f.append(std::string(ChoiceFile::kMaxLineBytes, 'k'), 1);
  ChoiceFile(path_, "bad\tstamp").append("k", 1);
  EXPECT_TRUE(f.load().empty());
}

// The tuner's key for a choice among candidates: their count and FNV-1a digest (the label "a" hashes as the bytes
// 'a', 0: 089be207b544f1e4 by the published offset basis and prime), short for any list, and different for another
// list, another order, or labels that join alike.
TEST(ChoiceFileKey, NamesTheCandidatesByCountAndDigest) {
  EXPECT_EQ(ChoiceFile::candidates_key("gemm 8x8", {"a"}), "gemm 8x8 {1 candidates, fnv1a 089be207b544f1e4}");
  const std::vector<std::string> list{"tma 64 rows/64 keys", "tma 64 rows/128 keys", "wgmma 192 rows/128 keys"};
  const std::string k = ChoiceFile::candidates_key("attention 1,16", list);
  EXPECT_EQ(k, ChoiceFile::candidates_key("attention 1,16", list));
  EXPECT_NE(k, ChoiceFile::candidates_key("attention 1,16", {list[1], list[0], list[2]}));
  EXPECT_NE(k, ChoiceFile::candidates_key("attention 1,16", {list[0], list[1]}));
  EXPECT_NE(k, ChoiceFile::candidates_key("attention 2,16", list));
  EXPECT_NE(ChoiceFile::candidates_key("k", {"ab", "c"}), ChoiceFile::candidates_key("k", {"a", "bc"}));
  // 132 labels of 40 bytes (5 KiB joined) still make a line the file stores and reads back.
  const std::vector<std::string> many(132, std::string(40, 'x'));
  const std::string long_key = ChoiceFile::candidates_key("attention 1,16,1370,1370,64,bf16,packed", many);
  EXPECT_LT(long_key.size(), 100u);
  const std::string path = testing::scratch_path_for_test("choices_key");
  std::remove(path.c_str());
  const ChoiceFile f(path, "GPU sm_90 v1");
  f.append(long_key, 32);
  const auto m = f.load();
  std::remove(path.c_str());
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.at(long_key), 32);
}

TEST_F(ChoiceFileTest, FailedAppendIsHarmless) {
  const ChoiceFile in_missing_dir(path_ + "/no/such/dir/choices", "S");
  EXPECT_NO_THROW(in_missing_dir.append("k", 1));
  EXPECT_NO_THROW(in_missing_dir.append("k2", 2));  // warned once
  EXPECT_TRUE(in_missing_dir.load().empty());
  fault::configure("choice_file.append");
  const ChoiceFile f(path_, "S");
  EXPECT_NO_THROW(f.append("k", 1));
  EXPECT_TRUE(f.load().empty());
  f.append("k", 1);  // the fault fired once: this one lands
  EXPECT_EQ(f.load().at("k"), 1);
}

TEST_F(ChoiceFileTest, ConcurrentAppendsStayWholeLines) {
  constexpr int kThreads = 8, kEach = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const ChoiceFile f(path_, "S");
      for (int i = 0; i < kEach; ++i) f.append("thread " + std::to_string(t) + " shape " + std::to_string(i), t);
    });
  for (auto& th : threads) th.join();
  const auto m = ChoiceFile(path_, "S").load();
  ASSERT_EQ(m.size(), static_cast<size_t>(kThreads * kEach));
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(m.at("thread " + std::to_string(t) + " shape 17"), t);
}

}  // namespace
}  // namespace dacpp
