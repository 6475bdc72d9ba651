// The key finding first (reports/finding.h) in summary.md: before the matrix, a CAUTION when
// something failed and a NOTE otherwise, its fix on a line of its own, and never cut.
#include <string>

#include <gtest/gtest.h>

#include "reports/finding.h"
#include "reports/reporter.h"
#include "reports/synthetic_report.h"
#include "reports/text.h"

namespace fc::reports {
namespace {

using nlohmann::json;
using testing::synthetic_report;
using testing::variant;

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t p = haystack.find(needle); p != std::string::npos; p = haystack.find(needle, p + 1))
    ++n;
  return n;
}

// `forkcheck exec` on a program: hung in libgomp (a finding with its fix), or ended ok.
json exec_report(const std::string& outcome) {
  json v = variant("exec", "none", "subject", "ok", outcome,
                   outcome == "ok" ? "exited 0" : "blocked when its 30.0 s deadline passed");
  if (outcome != "ok")
    v["stacks"] = json::array({{{"pid", 10},
                                {"tid", 10},
                                {"name", "train"},
                                {"state", "S"},
                                {"frames", json::array({"gomp_team_barrier_wait_end from "
                                                        "/lib/x86_64-linux-gnu/libgomp.so.1",
                                                        "main at train.cc:12"})}}});
  json c = {{"id", "exec"},
            {"title", "forkcheck exec: ./train"},
            {"verdict", outcome == "ok" ? "ok" : "failed"},
            {"verdict_reason", outcome},
            {"variants", json::array({v})}};
  return {{"tool", {{"name", "forkcheck"}, {"version", "0.1.0"}}},
          {"run", {{"argv", json::array({"forkcheck", "exec", "--", "./train"})}}},
          {"cases", json::array({c})},
          {"summary", {{"cases", 1}, {"variants", 1}, {"ok", outcome == "ok"}}}};
}

// --- summary.md --------------------------------------------------------------------------------

TEST(MarkdownFinding, StartsWithACautionWithFactsAndTheFix) {
  const json r = exec_report("hang");
  const Finding f = key_finding(r);
  const std::string md = make_markdown_reporter()->render(r);
  const std::string head = "> [!CAUTION]\n> **" + md_inline(f.headline) + "**\n";
  EXPECT_EQ(md.rfind(head, 0), 0u) << md.substr(0, 800);
  for (const auto& fact : f.facts)
    EXPECT_NE(md.find("> - " + md_inline(fact) + "\n"), std::string::npos) << fact;
  const size_t fix = md.find(">\n> **Fix:** " + md_inline(f.fix) + "\n");
  ASSERT_NE(fix, std::string::npos) << md.substr(0, 1500);
  EXPECT_LT(fix, md.find("# forkcheck report"));
  EXPECT_LT(fix, md.find("## Cases by start method"));
  EXPECT_EQ(count(md, "[!CAUTION]"), 1u);
}

TEST(MarkdownFinding, ANoteWhenNothingFailed) {
  const std::string md = make_markdown_reporter()->render(exec_report("ok"));
  EXPECT_EQ(md.rfind("> [!NOTE]\n> **exec: ok: exited 0**\n\n# forkcheck report", 0), 0u)
      << md.substr(0, 400);
  EXPECT_EQ(md.find("[!CAUTION]"), std::string::npos);
  EXPECT_EQ(md.find("**Fix:**"), std::string::npos);
}

json huge_report() {
  json r = synthetic_report();
  const std::string flood(100 * 1024, 'x');
  json cases = json::array();
  for (int i = 0; i < 200; ++i) {
    json c = r["cases"][i % 3];
    c["id"] = "case-" + std::to_string(i);
    c["verdict_reason"] = flood;
    for (auto& v : c["variants"]) {
      v["stdout"] = flood;
      v["message"] = flood;
    }
    cases.push_back(c);
  }
  r["cases"] = cases;
  return r;
}

TEST(MarkdownFinding, SurvivesTheSizeCap) {
  const json r = huge_report();
  const Finding f = key_finding(r);
  ASSERT_GT(f.facts.size(), 3u) << "long facts: each case's long verdict reason";
  const std::string head = "> [!CAUTION]\n> **" + md_inline(f.headline) + "**\n>\n> - ";
  for (size_t cap : {kMarkdownMaxBytes, size_t{16 * 1024}}) {
    const std::string md = make_markdown_reporter(cap)->render(r);
    EXPECT_LE(md.size(), cap);
    EXPECT_EQ(md.rfind(head, 0), 0u) << cap << ": " << md.substr(0, 600);
    EXPECT_NE(md.find("left out to stay under the size limit"), std::string::npos) << cap;
  }
}

}  // namespace
}  // namespace fc::reports
