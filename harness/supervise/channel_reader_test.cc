// The channel reader's rules (harness/supervise/channel_reader.h) on lines written here: what is
// a forkcheck message, what is a protocol error and why, how steps open and close, and that lines
// split across reads are whole again. No process.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/supervise/channel_reader.h"

namespace fc::harness {
namespace {

const Clock::time_point kStart = Clock::time_point() + std::chrono::seconds(100);

ChannelReader read_all(const std::string& text) {
  ChannelReader r(kStart);
  r.feed(text.data(), text.size(), kStart);
  return r;
}

TEST(ChannelReader, WhatIsNotAForkcheckMessageIsAProtocolErrorWithItsReason) {
  struct Row {
    std::string line, why;
  };
  const std::vector<Row> rows = {
      {"hello", "not JSON"},
      {"[1,2]", "not a JSON object"},
      {"{\"outcome\":\"ok\"}", "no \"ev\" string"},
      {"{\"ev\":\"shout\"}", "unknown \"ev\": \"shout\""},
      {"{\"ev\":\"result\",\"outcome\":3}", "\"outcome\" is not a string"},
      {"{\"ev\":\"result\",\"outcome\":\"ok\",\"details\":[]}", "\"details\" is not an object"},
      {"{\"ev\":\"details\"}", "a details message without \"details\""},
      {"{\"ev\":\"step\",\"step\":\"x\"}", "a step without \"pid\" or \"step\""},
      {"{\"ev\":\"step\",\"pid\":\"1\",\"step\":\"x\"}", "\"pid\" is not an integer"},
      {"{\"ev\":\"step\",\"pid\":1,\"step\":\"x\",\"within_s\":-1}",
       "\"within_s\" is not a number of seconds from 0 to a day"},
      {"{\"ev\":\"step\",\"pid\":1,\"step\":\"x\",\"within_s\":1e9}",
       "\"within_s\" is not a number of seconds from 0 to a day"},
      {std::string(70, '[') + std::string(70, ']'), "nested deeper than 64 levels"},
  };
  for (const auto& row : rows) {
    const auto r = read_all(row.line + "\n");
    EXPECT_EQ(r.bad_lines(), 1u) << row.line;
    EXPECT_EQ(r.bad_why(), row.why) << row.line;
    EXPECT_FALSE(r.result()) << row.line;
  }
}

TEST(ChannelReader, AfterABadLineNothingIsBelievedButEverythingCounted) {
  const auto r = read_all("nonsense\n{\"ev\":\"result\",\"outcome\":\"ok\"}\n");
  EXPECT_EQ(r.bad_lines(), 2u);
  EXPECT_FALSE(r.result());
}

TEST(ChannelReader, AResultDetailsAndStepsAreKeptAndALineSplitAcrossReadsIsWhole) {
  ChannelReader r(kStart);
  const std::string text =
      "{\"ev\":\"details\",\"details\":{\"a\":1}}\n"
      "{\"ev\":\"step\",\"pid\":7,\"step\":\"join\",\"within_s\":1.5}\n"
      "{\"ev\":\"step\",\"pid\":7,\"step\":\"fork\"}\n"
      "{\"ev\":\"step_done\",\"pid\":7,\"step\":\"join\"}\n"
      "{\"ev\":\"result\",\"outcome\":\"hang\",\"message\":\"m\",\"details\":{\"b\":2}}\n";
  for (size_t i = 0; i < text.size(); i += 7)  // seven bytes at a time
    r.feed(text.data() + i, std::min<size_t>(7, text.size() - i), kStart + std::chrono::seconds(1));
  EXPECT_EQ(r.bad_lines(), 0u) << r.bad_why();
  EXPECT_EQ(r.early_details(), nlohmann::json({{"a", 1}}));
  ASSERT_TRUE(r.result());
  EXPECT_EQ((*r.result())["outcome"], "hang");
  ASSERT_EQ(r.open_steps().size(), 1u) << "join was reported done; fork is still open";
  const OpenStep& fork = r.open_steps().begin()->second;
  EXPECT_EQ(fork.step, "fork");
  EXPECT_DOUBLE_EQ(fork.within_s, 2.0) << "the default allowance";
  EXPECT_EQ(r.step_log().size(), 3u);
  EXPECT_DOUBLE_EQ(r.step_log()[0]["t_s"].get<double>(), 1.0);
}

TEST(ChannelReader, ALineOverSixteenMiBIsOneBadLineAndTheRestIsSkipped) {
  ChannelReader r(kStart);
  const std::string chunk(1 << 20, 'x');
  for (int i = 0; i < 17; ++i) r.feed(chunk.data(), chunk.size(), kStart);
  r.feed("tail\n", 5, kStart);
  EXPECT_EQ(r.bad_lines(), 1u);
  EXPECT_EQ(r.bad_why(), "a line longer than 16 MiB");
  EXPECT_LT(r.bad_line().size(), 1200u) << "shown cut";
}

}  // namespace
}  // namespace fc::harness
