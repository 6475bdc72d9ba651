// reports/text.h: terminal_safe(), what a child printed made safe to show on a terminal (no
// control byte reaches it raw, a NUL does not cut the text short, valid UTF-8 is kept); and the
// one formatter of durations, CPU times and counts, each rule at its edges.
#include <string>

#include <gtest/gtest.h>

#include "reports/text.h"

namespace fc::reports {
namespace {

using namespace std::string_literals;  // "...\0..."s keeps the NUL

TEST(TerminalSafe, PlainTextNewlinesAndTabsAreKept) {
  EXPECT_EQ(terminal_safe("step 2 of 2 failed\n\tat main.py:3\n"),
            "step 2 of 2 failed\n\tat main.py:3\n");
  EXPECT_EQ(terminal_safe(""), "");
  EXPECT_EQ(terminal_safe("C:\\temp\\x1b"), "C:\\temp\\x1b") << "a backslash stays as it is";
}

TEST(TerminalSafe, NulIsShownAndTheTextAfterItKept) {
  EXPECT_EQ(terminal_safe("abc\0def"s), "abc\\0def");
  EXPECT_EQ(terminal_safe("\0"s), "\\0");
}

TEST(TerminalSafe, EscapeSequencesAreShownNotObeyed) {
  EXPECT_EQ(terminal_safe("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(terminal_safe("100%\r  0%"), "100%\\x0d  0%") << "a CR could overwrite the line";
  EXPECT_EQ(terminal_safe("\x07\x08\x7f"), "\\x07\\x08\\x7f") << "BEL, backspace, DEL";
  EXPECT_EQ(terminal_safe("\x1f "), "\\x1f ");
}

TEST(TerminalSafe, C1ControlsAreShownByTheirUtf8Bytes) {
  EXPECT_EQ(terminal_safe("a\xc2\x9b"
                          "31mb"),
            "a\\xc2\\x9b31mb")
      << "U+009B, CSI";
  EXPECT_EQ(terminal_safe("\xc2\x80\xc2\x9f"), "\\xc2\\x80\\xc2\\x9f") << "both ends of C1";
  EXPECT_EQ(terminal_safe("\xc2\xa0"), "\xc2\xa0") << "U+00A0 is no control";
}

TEST(TerminalSafe, ValidMultiByteUtf8IsKept) {
  const std::string text = "caf\xc3\xa9 \xe3\x81\x82 \xf0\x9f\x90\x8d \xe2\x80\x94 ok";
  EXPECT_EQ(terminal_safe(text), text);
}

TEST(TerminalSafe, BytesOutsideValidUtf8AreShownAsBytes) {
  EXPECT_EQ(terminal_safe("a\x9b"
                          "b"),
            "a\\x9bb")
      << "a lone 0x9B is CSI to an 8-bit terminal";
  EXPECT_EQ(terminal_safe("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(terminal_safe("\xe3\x81"), "\\xe3\\x81") << "a sequence cut short";
  EXPECT_EQ(terminal_safe("\xc2"
                          "A\xc3\xa9"),
            "\\xc2A\xc3\xa9")
      << "what follows is read again";
}

TEST(Formatters, DurationsCpuAndCountsAtTheEdgesOfEachRule) {
  struct Row {
    std::string got, want;
  };
  const Row rows[] = {
      {format_seconds(0), "0 ms"},
      {format_seconds(0.0349), "35 ms"},
      {format_seconds(0.9994), "999 ms"},
      {format_seconds(0.9996), "1.0 s"},
      {format_seconds(1.0), "1.0 s"},
      {format_seconds(12.34), "12.3 s"},
      {format_tenths(0.04), "0.0 s"},
      {format_tenths(0.45), "0.5 s"},
      {format_tenths(30), "30.0 s"},
      // CPU: none, a trace that would round to none, tenths of a ms, whole ms, seconds.
      {format_cpu(0), "0 ms"},
      {format_cpu(-1e-9), "0 ms"},
      {format_cpu(0.00003), "under 0.1 ms"},
      {format_cpu(0.00042), "0.4 ms"},
      {format_cpu(0.0099), "9.9 ms"},
      {format_cpu(0.009999), "10 ms"},
      {format_cpu(0.812), "812 ms"},
      {format_cpu(0.9996), "1.0 s"},
      {format_cpu(2.34), "2.3 s"},
      {counted(0, "process", "processes"), "0 processes"},
      {counted(1, "process", "processes"), "1 process"},
      {counted(7, "thread", "threads"), "7 threads"},
  };
  for (const auto& r : rows) EXPECT_EQ(r.got, r.want);
}

}  // namespace
}  // namespace fc::reports
