#include <string>

#include <gtest/gtest.h>

#include "harness/supervise/capture.h"

namespace fc::harness {
namespace {

TEST(Capture, SmallOutputIsKeptWhole) {
  Capture c(16);
  c.append("hello\n", 6);
  c.append("world\n", 6);
  EXPECT_EQ(c.text(), "hello\nworld\n");
  EXPECT_FALSE(c.truncated());
}

TEST(Capture, KeepsHeadAndTailAndCountsTheRest) {
  Capture c(4);
  std::string all;
  for (char ch = 'a'; ch <= 'z'; ++ch) all += ch;
  for (char ch : all) c.append(&ch, 1);  // byte by byte exercises the ring
  EXPECT_EQ(c.total_bytes(), 26u);
  EXPECT_EQ(c.dropped_bytes(), 18u);
  std::string t = c.text();
  EXPECT_EQ(t.substr(0, 4), "abcd");
  EXPECT_EQ(t.substr(t.size() - 4), "wxyz");
  EXPECT_NE(t.find("dropped 18 bytes"), std::string::npos);
}

TEST(Capture, LargeChunkKeepsItsEnd) {
  Capture c(4);
  std::string big(1000, 'x');
  big += "TAIL";
  c.append(big.data(), big.size());
  std::string t = c.text();
  EXPECT_EQ(t.substr(t.size() - 4), "TAIL");
  EXPECT_EQ(c.dropped_bytes(), 1004u - 8u);
}

TEST(Capture, LastLinesSkipBlankLines) {
  Capture c(1024);
  std::string s = "one\ntwo\n\nthree\n\n";
  c.append(s.data(), s.size());
  EXPECT_EQ(c.last_lines(2), "two\nthree");
  EXPECT_EQ(c.last_lines(1), "three");
}

}  // namespace
}  // namespace fc::harness
