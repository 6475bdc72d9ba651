// The step lines the repro processes write on the channel (repros/core/channel.h): whatever the
// step's name holds, each line is one JSON object the harness can read, ending in a newline.
#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/channel.h"

namespace {

using fc::channel::detail::format_step_line;

nlohmann::json line_of(const std::string& step, double within_s, std::size_t cap = 512) {
  std::string buf(cap, '\0');
  const std::size_t n = format_step_line(buf.data(), cap, within_s < 0 ? "step_done" : "step", 42,
                                         step.c_str(), within_s, 12.5);
  EXPECT_GT(n, 0u);
  EXPECT_LE(n, cap);
  if (n == 0) return nlohmann::json(nlohmann::json::value_t::discarded);
  EXPECT_EQ(buf[n - 1], '\n');
  return nlohmann::json::parse(buf.substr(0, n), nullptr, false);
}

TEST(ChannelLine, QuotesBackslashesAndControlCharactersAreEscaped) {
  const std::string name = "a \"quoted\" \\ name\twith a\nnewline";
  for (double within : {1.5, -1.0}) {
    const auto j = line_of(name, within);
    ASSERT_FALSE(j.is_discarded());
    EXPECT_EQ(j["step"], name);
    EXPECT_EQ(j["pid"], 42);
    EXPECT_EQ(j["ev"], within < 0 ? "step_done" : "step");
    EXPECT_EQ(j.contains("within_s"), within >= 0);
  }
}

TEST(ChannelLine, ALongNameIsCutAndTheLineStaysValid) {
  const auto j = line_of(std::string(1000, 'x'), 1.5, 128);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_LT(j["step"].get<std::string>().size(), 128u);
  EXPECT_EQ(j["within_s"], 1.5);
}

TEST(ChannelLine, ACutNeverSplitsAUtf8Character) {
  std::string name;
  for (int i = 0; i < 100; ++i) name += "\xe3\x81\x82";  // U+3042, three bytes each
  for (std::size_t cap = 100; cap < 110; ++cap) {
    const auto j = line_of(name, 1.5, cap);  // parse() rejects invalid UTF-8
    ASSERT_FALSE(j.is_discarded()) << cap;
    EXPECT_EQ(j["step"].get<std::string>().size() % 3, 0u) << cap;
  }
}

TEST(ChannelLine, AStepsTwoLinesCarryTheSameCutName) {
  // The harness closes a step on an exact name match: its begin and end must agree.
  const std::string name(1000, 'y');
  const auto begin = line_of(name, 1.5), end = line_of(name, -1);
  ASSERT_FALSE(begin.is_discarded());
  ASSERT_FALSE(end.is_discarded());
  EXPECT_EQ(begin["step"], end["step"]);
  EXPECT_LT(begin["step"].get<std::string>().size(), 1000u);
}

TEST(ChannelLine, AnAllowanceJsonCannotWriteStillMakesAValidLine) {
  for (double within : {std::numeric_limits<double>::max(), std::numeric_limits<double>::infinity(),
                        std::numeric_limits<double>::quiet_NaN()}) {
    const auto j = line_of("x", within);
    ASSERT_FALSE(j.is_discarded()) << within;
    EXPECT_LE(j["within_s"].get<double>(), 1e9) << within;
  }
}

TEST(ChannelLine, ABufferTooSmallForTheFixedPartWritesNothing) {
  char buf[16];
  EXPECT_EQ(format_step_line(buf, sizeof buf, "step", 42, "x", 1.5, 12.5), 0u);
}

}  // namespace
