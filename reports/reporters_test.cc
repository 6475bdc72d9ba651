// The reporters on a synthetic report: escaping in every format, JUnit failures exactly where an
// outcome differs from its expectation, timeout and protocol-error shown as what they are with
// what the watchdog saw of the tree, the Markdown size cap, the loss-curve charts.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <pugixml.hpp>

#include "core/outcome.h"
#include "read_text.h"
#include "reports/model/report_model_json.h"
#include "reports/report_view.h"
#include "reports/reporter.h"
#include "reports/run_log.h"
#include "reports/svg_line_chart.h"
#include "reports/synthetic_report.h"
#include "reports/text.h"
#include "reports/watchdog_text.h"

namespace fc::reports {
namespace {

using fc::test_text::occurrences;
using nlohmann::json;
using testing::huge_report;
using testing::synthetic_report;

// --- text helpers ----------------------------------------------------------------------------

TEST(Text, HtmlEscapesEverythingThatCouldBeMarkup) {
  EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST(Text, InvalidUtf8IsReplaced) {
  EXPECT_EQ(valid_utf8("a\xff"
                       "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(valid_utf8("\xe3\x81\x82"), "\xe3\x81\x82");  // valid Japanese stays
}

TEST(Text, XmlSafeDropsWhatXml10CannotHold) {
  EXPECT_EQ(xml_safe(std::string("a\x01\x1b[31mb\tc\n\0d", 13)), "a[31mb\tc\nd");
  EXPECT_EQ(xml_safe("\xEF\xBF\xBE"), "");  // U+FFFE
}

TEST(Text, CapKeepsHeadAndTailOnCharacterBoundaries) {
  std::string s;
  for (int i = 0; i < 1000; ++i) s += "\xe3\x81\x82";  // 3-byte characters
  const std::string capped = cap_text(s, 100);
  EXPECT_LT(capped.size(), 200u);
  EXPECT_NE(capped.find("bytes cut here"), std::string::npos);
  EXPECT_EQ(valid_utf8(capped), capped);
  EXPECT_EQ(cap_text("short", 100), "short");
}

TEST(Text, MarkdownInlineNeutralisesMarkupAndCells) {
  const std::string s = md_inline("a | b <script> *x* [l](u)\nnext");
  EXPECT_EQ(s.find('\n'), std::string::npos);
  EXPECT_EQ(s.find("<script>"), std::string::npos);
  EXPECT_NE(s.find("\\|"), std::string::npos);
  EXPECT_NE(s.find("\\*x\\*"), std::string::npos);
}

TEST(Text, CodeBlockFenceOutlastsBackticksInside) {
  const std::string block = md_code_block("```\nnot the end\n````\n");
  EXPECT_EQ(block.rfind("`````text\n", 0), 0u);
}

// --- the shared view -------------------------------------------------------------------------

TEST(ReportView, MatrixColumnsAndCells) {
  const json r = synthetic_report();
  EXPECT_EQ(matrix_methods(read_report(r)),
            (std::vector<std::string>{"fork", "spawn", "forkserver"}));
  const json& gomp = r["cases"][0];
  ASSERT_EQ(variants_with_method(read_as<Case>(gomp), "fork").size(), 1u);
  EXPECT_EQ(outcome_vs_expected(read_variant(gomp["variants"][0])), "hang \u2713 expected hang");
  EXPECT_EQ(outcome_vs_expected(read_variant(gomp["variants"][1])), "crash \u2717 expected ok");
  const auto tables = detail_tables(read_variant(r["cases"][2]["variants"][0]));
  ASSERT_EQ(tables.size(), 1u);
  ASSERT_EQ(tables[0].rows.size(), 5u);
  EXPECT_EQ(tables[0].rows[0].cells,
            (std::vector<std::string>{"0", "200", "train finished", "0.7000", "0.4759", "3.5000"}));
  EXPECT_EQ(tables[0].rows[0].status, "ok");
  EXPECT_EQ(detail_charts(read_variant(r["cases"][2]["variants"][0])).at(0).series.size(), 5u);
  EXPECT_TRUE(detail_charts(read_variant(r["cases"][2]["variants"][1])).empty())
      << "no worker trained";
  // summary.md points at them only where a case drew them.
  EXPECT_NE(make_markdown_reporter()->render(read_report(r)).find("the charts (loss curves)"),
            std::string::npos);
}

TEST(ReportView, FoldGivesNotRunVariantsEveryField) {
  std::vector<json> lines = {
      {{"type", "run"}, {"tool", {{"name", "forkcheck"}, {"version", "0"}}}},
      {{"type", "case"},
       {"id", "c"},
       {"variants", json::array({{{"name", "v"}, {"expected", "ok"}, {"role", "fix"}}})}}};
  const json r = fold_run_log(lines);  // no variant line, no end line: cut short
  const json& v = r["cases"][0]["variants"][0];
  for (const char* k :
       {"outcome", "message", "duration_s", "exit", "stdout", "stderr", "details", "stacks"})
    EXPECT_TRUE(v.contains(k)) << k;
  EXPECT_EQ(r["run"]["complete"], false);
}

// --- JSON --------------------------------------------------------------------------------------

TEST(JsonReporter, RoundTrips) {
  json r = synthetic_report();
  r["cases"][0]["variants"][1]["stderr"] = "valid";
  EXPECT_EQ(json::parse(make_json_reporter()->render(read_report(r))), r);
}

TEST(JsonReporter, ReplacesInvalidUtf8) {
  const json back = json::parse(make_json_reporter()->render(read_report(synthetic_report())));
  EXPECT_EQ(back["cases"][0]["variants"][1]["stderr"],
            "invalid utf-8: \xEF\xBF\xBD\xEF\xBF\xBD end\n");
}

// --- HTML --------------------------------------------------------------------------------------

class Html : public ::testing::Test {
 protected:
  void SetUp() override { html_ = make_html_reporter()->render(read_report(synthetic_report())); }
  std::string html_;
};

TEST_F(Html, EscapesTextFromTheRun) {
  EXPECT_EQ(html_.find("<b>tags</b>"), std::string::npos);
  EXPECT_NE(html_.find("&lt;b&gt;tags&lt;/b&gt;"), std::string::npos);
  EXPECT_EQ(html_.find("<injected/>"), std::string::npos);
  EXPECT_EQ(html_.find("<i>with markup</i>"), std::string::npos);
  EXPECT_EQ(html_.find('\x01'), std::string::npos) << "control characters are not HTML";
  EXPECT_EQ(valid_utf8(html_), html_);
}

TEST_F(Html, MatrixHasARowPerCaseAndACellPerVariant) {
  EXPECT_NE(html_.find("<table class=\"matrix\">"), std::string::npos);
  for (const char* id : {"hang-case", "unbitten-case", "curves-case"})
    EXPECT_NE(html_.find("data-case=\"" + std::string(id) + "\""), std::string::npos) << id;
  EXPECT_NE(html_.find("hang \u2713 expected hang"), std::string::npos);
  EXPECT_NE(html_.find("crash \u2717 expected ok"), std::string::npos);
  EXPECT_EQ(occurrences(html_, "class=\"cell o-"),
            10u + 8u);  // 10 variants, and the legend's 8 samples
}

TEST_F(Html, TinyNnComesFirstWithFiveLossCurves) {
  const size_t featured = html_.find("id=\"featured\"");
  ASSERT_NE(featured, std::string::npos);
  EXPECT_LT(featured, html_.find("id=\"case-hang-case\""));
  EXPECT_GT(featured, html_.find("id=\"matrix\""));
  const std::string section = html_.substr(featured, html_.find("</section>", featured) - featured);
  EXPECT_EQ(occurrences(section, "<polyline"), 5u);
  EXPECT_NE(section.find("Unable to handle autograd"), std::string::npos)
      << "the fork error beside the workers";
  EXPECT_NE(section.find("train finished"), std::string::npos);
  EXPECT_NE(section.find("3.5000"), std::string::npos) << "param_norm";
}

TEST_F(Html, ShowsStacksOutputsDetailsAndTheEnvironment) {
  EXPECT_NE(html_.find("GOMP_parallel from libgomp.so.1"), std::string::npos);
  EXPECT_NE(html_.find("<pre class=\"stdout\">"), std::string::npos);
  EXPECT_NE(html_.find("<details class=\"details\">"), std::string::npos);
  const size_t env = html_.find("id=\"environment\"");
  ASSERT_NE(env, std::string::npos);
  EXPECT_NE(html_.find("1.13.0", env), std::string::npos);
  EXPECT_NE(html_.find("libgomp (GNU)", env), std::string::npos);
  EXPECT_NE(html_.find("@media print"), std::string::npos);
}

TEST_F(Html, FetchesNothing) {
  EXPECT_EQ(html_.find("<script"), std::string::npos);
  EXPECT_EQ(html_.find("<link"), std::string::npos);
  EXPECT_EQ(html_.find("<img"), std::string::npos);
  EXPECT_EQ(html_.find("@import"), std::string::npos);
  EXPECT_EQ(html_.find("url("), std::string::npos);
  std::regex remote(R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase);
  EXPECT_FALSE(std::regex_search(html_, remote));
}

// --- JUnit -------------------------------------------------------------------------------------

class Junit : public ::testing::Test {
 protected:
  void SetUp() override {
    xml_ = make_junit_reporter()->render(read_report(synthetic_report()));
    parsed_ = doc_.load_string(xml_.c_str());
  }
  pugi::xml_node testcase(const std::string& classname, const std::string& name) {
    for (auto s : doc_.child("testsuites").children("testsuite"))
      for (auto t : s.children("testcase"))
        if (classname == t.attribute("classname").value() && name == t.attribute("name").value())
          return t;
    return {};
  }
  std::string xml_;
  pugi::xml_document doc_;
  pugi::xml_parse_result parsed_;
};

TEST_F(Junit, IsWellFormedDespiteControlCharactersAndBadUtf8) {
  ASSERT_TRUE(parsed_) << parsed_.description() << "\n" << xml_;
  EXPECT_EQ(xml_.find('\x01'), std::string::npos);
  EXPECT_EQ(xml_.find('\x1b'), std::string::npos);
  EXPECT_EQ(valid_utf8(xml_), xml_);
  EXPECT_EQ(xml_.find("<injected/>"), std::string::npos);
}

TEST_F(Junit, OneSuitePerCaseOneTestcasePerVariant) {
  ASSERT_TRUE(parsed_);
  auto root = doc_.child("testsuites");
  EXPECT_EQ(root.attribute("tests").as_int(), 10);
  size_t suites = 0;
  for (auto s : root.children("testsuite")) {
    (void)s;
    ++suites;
  }
  EXPECT_EQ(suites, 4u);
  auto t = testcase("hang-case", "fork");
  ASSERT_TRUE(t);
  EXPECT_DOUBLE_EQ(t.attribute("time").as_double(), 1.25);
}

TEST_F(Junit, FailuresExactlyWhereTheOutcomeDiffers) {
  ASSERT_TRUE(parsed_);
  const json r = synthetic_report();
  int failures = 0, errors = 0;
  for (const auto& c : r["cases"])
    for (const auto& v : c["variants"]) {
      auto t = testcase(c["id"].get<std::string>(), v["name"].get<std::string>());
      ASSERT_TRUE(t) << c["id"] << "/" << v["name"];
      const bool mismatch = v["outcome"] != v["expected"];
      const bool has = t.child("failure") || t.child("error");
      EXPECT_EQ(has, mismatch) << c["id"] << "/" << v["name"];
      if (t.child("failure")) ++failures;
      if (t.child("error")) ++errors;
    }
  EXPECT_EQ(failures,
            4);  // the regression, the hazard that did not bite, the timeout, the protocol error
  EXPECT_EQ(errors, 1);  // the harness error
  auto reg = testcase("hang-case", "spawn").child("failure");
  EXPECT_STREQ(reg.attribute("type").value(), "crash");
  EXPECT_NE(std::string(reg.attribute("message").value()).find("regression"), std::string::npos);
  EXPECT_NE(std::string(reg.text().get()).find("killed by SIGSEGV </failure><injected/>"),
            std::string::npos)
      << "the message in the body too, escaped";
  EXPECT_STREQ(testcase("hang-case", "forkserver").child("error").attribute("type").value(),
               "error");
  auto not_bitten = testcase("unbitten-case", "fork-plain").child("failure");
  EXPECT_NE(std::string(not_bitten.text().get()).find("did not bite"), std::string::npos);
}

TEST_F(Junit, ExpectedSkipsAreSkippedWithTheReason) {
  ASSERT_TRUE(parsed_);
  auto t = testcase("unbitten-case", "macos-only");
  ASSERT_TRUE(t.child("skipped"));
  EXPECT_STREQ(t.child("skipped").attribute("message").value(), "needs macOS");
  EXPECT_FALSE(t.child("failure"));
}

TEST_F(Junit, OutputsGoToSystemOutAndSystemErr) {
  ASSERT_TRUE(parsed_);
  EXPECT_NE(std::string(testcase("hang-case", "fork").child("system-out").text().get())
                .find("<b>tags</b>"),
            std::string::npos);
  EXPECT_NE(std::string(testcase("hang-case", "spawn").child("system-err").text().get())
                .find("invalid utf-8"),
            std::string::npos);
}

// --- Markdown ----------------------------------------------------------------------------------

TEST(Markdown, HasTheMatrixVerdictsTinyNnAndEnvironment) {
  const std::string md = make_markdown_reporter()->render(read_report(synthetic_report()));
  EXPECT_NE(md.find("| case | verdict | fork | spawn | forkserver |"), std::string::npos);
  EXPECT_NE(md.find("## Verdicts"), std::string::npos);
  EXPECT_NE(md.find("regression: the fixed behaviour broke"), std::string::npos);
  EXPECT_NE(md.find("train finished"), std::string::npos);
  EXPECT_NE(md.find("<details><summary><b>hang-case</b>: regression: title of hang-case &lt;i&gt;"),
            std::string::npos)
      << "HTML-escaped in the HTML block";
  EXPECT_NE(md.find("## Environment"), std::string::npos);
  EXPECT_NE(md.find("1.13.0"), std::string::npos);
  EXPECT_EQ(md.find("<injected/>"), std::string::npos) << "a message is text, not markup";
  EXPECT_EQ(md.find('\x01'), std::string::npos);
  // every table row has the same number of unescaped cell separators as the header
  const std::string header = "| case | verdict | fork | spawn | forkserver |";
  size_t pos = md.find(header);
  std::regex sep(R"((^|[^\\])\|)");
  for (size_t line = md.find('\n', pos) + 1; md.compare(line, 1, "|") == 0;
       line = md.find('\n', line) + 1) {
    const std::string row = md.substr(line, md.find('\n', line) - line);
    EXPECT_EQ(
        std::distance(std::sregex_iterator(row.begin(), row.end(), sep), std::sregex_iterator()), 6)
        << row;
  }
}

TEST(Markdown, AHugeReportFitsAGitHubComment) {
  const json r = huge_report();
  const std::string md = make_markdown_reporter()->render(read_report(r));
  EXPECT_LE(md.size(), 65536u);
  EXPECT_LE(md.size(), kMarkdownMaxBytes);
  EXPECT_NE(md.find("## Environment"), std::string::npos) << "the environment survives the cut";
  EXPECT_TRUE(md.find("bytes cut here") != std::string::npos ||
              md.find("left out") != std::string::npos);
  EXPECT_EQ(occurrences(md, "<details"), occurrences(md, "</details>")) << "no <details> left open";
  size_t fences = 0;
  for (size_t p = md.find("\n```"); p != std::string::npos; p = md.find("\n```", p + 1)) ++fences;
  EXPECT_EQ(fences % 2, 0u) << "no code fence left open";
}

TEST(Markdown, ASmallCapLeavesWholePartsOutAndSaysSo) {
  const std::string md = make_markdown_reporter(6000)->render(read_report(huge_report()));
  EXPECT_LE(md.size(), 6000u);
  EXPECT_NE(md.find("left out to stay under the size limit"), std::string::npos);
}

// --- crash details: which worker died, how and when; stacks in JUnit -----------------------------

json crashed_pool_variant() {
  json v =
      testing::variant("pool-crash", "fork", "fix", "ok", "crash",
                       "worker 1 (pid 4242, fork) killed by SIGSEGV (Segmentation fault), 0.21 s "
                       "after the pool started");
  v["details"] = {{"workers", json::array({
                                  {{"index", 0},
                                   {"pid", 4241},
                                   {"start_method", "fork"},
                                   {"status", "ok"},
                                   {"ended_after_s", 2.0},
                                   {"result", {{"message", "fine"}}}},
                                  {{"index", 1},
                                   {"pid", 4242},
                                   {"start_method", "fork"},
                                   {"status", "crash"},
                                   {"signal", 11},
                                   {"signal_name", "SIGSEGV"},
                                   {"core_dumped", false},
                                   {"error", "killed by SIGSEGV (Segmentation fault)"},
                                   {"ended_after_s", 0.21}},
                                  {{"index", 2},
                                   {"pid", 4243},
                                   {"start_method", "fork"},
                                   {"status", "error"},
                                   {"exit_code", 3},
                                   {"error", "worker exited with status 3 without a result"},
                                   {"ended_after_s", 0.6}},
                              })}};
  return v;
}

json report_with_crash_details() {
  json r = testing::synthetic_report();
  r["cases"][0]["variants"].push_back(crashed_pool_variant());
  // An exec-like hang that was expected ok: a failure whose body must carry the stacks.
  json hung = r["cases"][0]["variants"][0];
  hung["name"] = "hung-fix";
  hung["role"] = "fix";
  hung["expected"] = "ok";
  r["cases"][0]["variants"].push_back(hung);
  return r;
}

const char* const kCrashLine =
    "worker 1 (pid 4242, fork): killed by SIGSEGV (Segmentation fault), 210 ms after the pool "
    "started";

// A case's own tables: reports/ knows no column of them, and shows them in every format, in the
// case's own section, not again in its raw details.
TEST(DetailViews, AnyCasesTablesAreShownInItsSectionInEveryFormat) {
  json r = synthetic_report();
  json& v = r["cases"][0]["variants"][0];  // hang-case, not the featured one
  v["details"] = {
      {"arms", 2},
      {"tables",
       {{{"title", "the arms"},
         {"columns", {"arm", "reach | m"}},
         {"rows",
          {{{"cells", {"left", 1.5}}, {"status", "crash"}}, {{"cells", {"right <b>"}}}}}}}}};
  const std::string html = make_html_reporter()->render(read_report(r));
  const size_t section = html.find("id=\"case-hang-case\"");
  ASSERT_NE(section, std::string::npos);
  const std::string own = html.substr(section, html.find("</section>", section) - section);
  EXPECT_NE(own.find("<caption>the arms</caption>"), std::string::npos);
  EXPECT_NE(own.find("<th>reach | m</th>"), std::string::npos);
  EXPECT_NE(own.find("<td class=\"msg o-crash\">left</td><td class=\"num\">1.5000</td>"),
            std::string::npos)
      << "the row's end coloured on its text, the number with 4 decimals";
  EXPECT_NE(own.find("<td>right &lt;b&gt;</td><td></td>"), std::string::npos)
      << "escaped, and a short row's missing cell left empty";
  EXPECT_EQ(own.find("\"tables\""), std::string::npos) << "not again in the raw details";
  EXPECT_NE(own.find("&quot;arms&quot;: 2"), std::string::npos) << "the rest of the details stay";

  const std::string md = make_markdown_reporter()->render(read_report(r));
  EXPECT_NE(md.find("*the arms*\n\n| arm | reach \\| m |\n|---|---|\n| left | 1.5000 |\n"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("\"tables\""), std::string::npos);
}

TEST(ReportView, FailedWorkersNameIndexPidMethodHowAndWhen) {
  const auto lines = failed_workers(read_variant(crashed_pool_variant()));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], kCrashLine);
  EXPECT_EQ(lines[1],
            "worker 2 (pid 4243, fork): worker exited with status 3 without a result, 600 ms after "
            "the pool started");
  const auto capped = failed_workers(read_variant(crashed_pool_variant()), 1);
  ASSERT_EQ(capped.size(), 2u);
  EXPECT_EQ(capped[1], "and 1 more");
  EXPECT_TRUE(
      failed_workers(read_variant(testing::variant("x", "fork", "fix", "ok", "ok"))).empty());
}

// A repro program that could not list its cases: its cases are missing, and every format says so
// at its top (JUnit with an error, so CI does not pass on the cases that were there).
TEST(CatalogErrors, EveryFormatSaysCasesAreMissingAndWhy) {
  json r = synthetic_report();
  const std::string error =
      "/opt/fc/forkcheck-repro-torch --list: cannot start '/opt/fc/forkcheck-repro-torch': "
      "<missing>";
  r["run"]["catalog_errors"] = json::array({error});
  const std::string html = make_html_reporter()->render(read_report(r));
  const size_t banner = html.find("id=\"catalog-errors\"");
  ASSERT_NE(banner, std::string::npos);
  EXPECT_LT(banner, html.find("<table class=\"matrix\">")) << "the banner comes before the matrix";
  EXPECT_NE(html.find("<li>" + html_escape(error) + "</li>"), std::string::npos);
  const std::string md = make_markdown_reporter()->render(read_report(r));
  EXPECT_NE(md.find(std::string("> **") + kCatalogErrorsHeadline + "**"), std::string::npos) << md;
  EXPECT_LT(md.find(kCatalogErrorsHeadline), md.find("## Cases by start method"));
  EXPECT_NE(md.find("forkcheck-repro-torch --list: cannot start"), std::string::npos);

  pugi::xml_document doc;
  const std::string xml = make_junit_reporter()->render(read_report(r));
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  auto root = doc.child("testsuites");
  EXPECT_EQ(root.attribute("tests").as_int(), 10 + 1);
  pugi::xml_node tc;
  for (auto s : root.children("testsuite"))
    for (auto t : s.children("testcase"))
      if (std::string(t.attribute("classname").value()) == "forkcheck") tc = t;
  ASSERT_TRUE(tc) << xml;
  EXPECT_EQ(std::string(tc.attribute("name").value()), "catalog: /opt/fc/forkcheck-repro-torch");
  ASSERT_TRUE(tc.child("error"));
  EXPECT_NE(std::string(tc.child("error").attribute("message").value()).find(error),
            std::string::npos);
  pugi::xml_document plain;
  ASSERT_TRUE(
      plain.load_string(make_junit_reporter()->render(read_report(synthetic_report())).c_str()));
  EXPECT_EQ(root.attribute("errors").as_int(),
            plain.child("testsuites").attribute("errors").as_int() + 1);
}

TEST(CatalogErrors, MakeTheRunNotOk) {
  std::vector<json> lines = {
      {{"type", "run"}, {"catalog_errors", json::array({"forkcheck-repro-torch --list: gone"})}},
      {{"type", "end"}}};
  EXPECT_EQ(fold_run_log(lines)["summary"]["ok"], false);
  lines[0].erase("catalog_errors");
  EXPECT_EQ(fold_run_log(lines)["summary"]["ok"], true);
}

// An interrupted run: a hazard never started (not_run) and a fix cut short (interrupted) are
// "not run" and "not finished" in every format, and no format counts them as a mismatch, a
// regression or a failure; the case is partial, not "not reproduced" (its hazard never ran).
TEST(Interrupted, VariantsNotSeenToTheirEndAreNotRunInEveryFormatAndNeverAFailure) {
  const json fork = {{"name", "fork"},
                     {"start_method", "fork"},
                     {"role", "hazard"},
                     {"expected", "hang"},
                     {"expected_why", "w"}};
  json spawn = fork, forkserver = fork;
  spawn["name"] = spawn["start_method"] = "spawn";
  forkserver["name"] = forkserver["start_method"] = "forkserver";
  spawn["role"] = forkserver["role"] = "fix";
  spawn["expected"] = forkserver["expected"] = "ok";
  std::vector<json> lines = {
      {{"type", "run"}, {"tool", {{"name", "forkcheck"}, {"version", "0"}}}},
      {{"type", "case"}, {"id", "c"}, {"title", "t"}, {"variants", {fork, spawn, forkserver}}},
      {{"type", "variant"}, {"case", "c"}, {"name", "spawn"}, {"outcome", "ok"}},
      {{"type", "variant"},
       {"case", "c"},
       {"name", "fork"},
       {"outcome", "skip"},
       {"interrupted", true},
       {"not_run", true},
       {"message", "not run: forkcheck was interrupted by SIGINT before it started"}},
      {{"type", "variant"},
       {"case", "c"},
       {"name", "forkserver"},
       {"outcome", "skip"},
       {"interrupted", true},
       {"message", "not finished: forkcheck was interrupted by SIGINT after 2.0 s and killed it"}},
      {{"type", "end"}, {"interrupted", true}}};
  const json r = fold_run_log(lines);
  EXPECT_EQ(r["summary"]["mismatches"], 0);
  EXPECT_EQ(r["summary"]["regressions"], 0);
  EXPECT_EQ(r["cases"][0]["verdict"], "partial") << r["cases"][0]["verdict_reason"];
  EXPECT_NE(r["cases"][0]["verdict_reason"].get<std::string>().find("forkcheck was interrupted"),
            std::string::npos);

  pugi::xml_document doc;
  const std::string xml = make_junit_reporter()->render(read_report(r));
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  const auto root = doc.child("testsuites");
  EXPECT_EQ(root.attribute("failures").as_int(), 0) << xml;
  EXPECT_EQ(root.attribute("errors").as_int(), 0) << xml;
  EXPECT_EQ(root.attribute("skipped").as_int(), 2) << xml;

  const std::string html = make_html_reporter()->render(read_report(r));
  EXPECT_NE(html.find("not run (expected hang)"), std::string::npos);
  EXPECT_NE(html.find("not finished (expected ok)"), std::string::npos);
  EXPECT_EQ(html.find("cell o-skip mismatch"), std::string::npos) << "no cell is a mismatch";
  EXPECT_EQ(html.find("regression:"), std::string::npos);

  const std::string md = make_markdown_reporter()->render(read_report(r));
  EXPECT_NE(md.find("not run (expected hang)"), std::string::npos) << md;
  EXPECT_EQ(md.find("not run (expected hang) \u26a0"), std::string::npos) << md;
  EXPECT_EQ(md.find("not finished (expected ok) \u26a0"), std::string::npos) << md;
  EXPECT_EQ(md.find("regression"), std::string::npos) << md;

  const std::string issue = make_issue_reporter()->render(read_report(r));
  EXPECT_EQ(issue.find("regression"), std::string::npos) << issue;
}

TEST(CatalogErrors, NoneMeansNoBanner) {
  const json r = synthetic_report();
  EXPECT_EQ(make_html_reporter()->render(read_report(r)).find("catalog-errors"), std::string::npos);
  EXPECT_EQ(make_markdown_reporter()->render(read_report(r)).find(kCatalogErrorsHeadline),
            std::string::npos);
  EXPECT_EQ(make_junit_reporter()->render(read_report(r)).find("classname=\"forkcheck\""),
            std::string::npos);
}

TEST(CrashDetails, EveryFormatNamesTheWorkerThatDiedAndWhen) {
  const json r = report_with_crash_details();
  const std::string html = make_html_reporter()->render(read_report(r));
  EXPECT_NE(html.find("<li>" + html_escape(kCrashLine) + "</li>"), std::string::npos);
  const std::string md = make_markdown_reporter()->render(read_report(r));
  for (const char* part : {"worker 1 (pid 4242, fork)", "SIGSEGV", "210 ms after the pool started",
                           "worker 2 (pid 4243, fork)", "status 3"})
    EXPECT_NE(md.find(part), std::string::npos) << part;
  pugi::xml_document doc;
  const std::string xml = make_junit_reporter()->render(read_report(r));
  ASSERT_TRUE(doc.load_string(xml.c_str()));
  pugi::xml_node failure;
  for (auto t : doc.child("testsuites").first_child().children("testcase"))
    if (std::string(t.attribute("name").value()) == "pool-crash") failure = t.child("failure");
  ASSERT_TRUE(failure);
  EXPECT_NE(std::string(failure.text().get()).find(kCrashLine), std::string::npos)
      << failure.text().get();
}

TEST(CrashDetails, JunitCarriesTheStacksOfAHungTree) {
  pugi::xml_document doc;
  const std::string xml = make_junit_reporter()->render(read_report(report_with_crash_details()));
  ASSERT_TRUE(doc.load_string(xml.c_str()));
  pugi::xml_node passed, failed;
  for (auto t : doc.child("testsuites").first_child().children("testcase")) {
    if (std::string(t.attribute("name").value()) == "fork") passed = t;
    if (std::string(t.attribute("name").value()) == "hung-fix") failed = t;
  }
  ASSERT_TRUE(passed && failed);
  // An expected hang passes: its stacks follow its output in <system-out>.
  const std::string out = passed.child("system-out").text().get();
  EXPECT_NE(out.find("<b>tags</b>"), std::string::npos) << "the output stays first";
  EXPECT_NE(out.find("#0 GOMP_parallel from libgomp.so.1"), std::string::npos) << out;
  EXPECT_NE(out.find("pid 7 tid 7 forkcheck-repro [S futex_do_wait]"), std::string::npos) << out;
  // A hang that fails: in the failure's body too, which is all GitLab shows.
  EXPECT_NE(std::string(failed.child("failure").text().get()).find("#1 main at x.cc:3"),
            std::string::npos);
  EXPECT_EQ(std::string(failed.child("system-out").text().get()).find("GOMP_parallel"),
            std::string::npos)
      << "not twice";
}

// --- timeout, protocol-error and what the watchdog saw of the tree -------------------------------

// The synthetic report's variants of them: the hang (tree blocked, a thread in futex), a hazard
// expected to hang that timed out while working, a fix that broke its channel, a fix that ended
// by itself after its deadline.
const char* const kBlocked =
    "blocked for 3.2 s: 0.4 ms of CPU in the last 1.0 s, 3 processes, 7 threads";
const char* const kWorking =
    "still working at the deadline: 812 ms of CPU in the last 1.0 s, 2 processes, 5 threads";
const char* const kLate =
    "still working at the deadline: 1.5 s of CPU in the last 1.0 s, 1 process, 1 thread";
// The end of its own that variant's message says (once: no report says it again in other words).
const char* const kByItself =
    " (its 60.0 s deadline had passed, but it ended by itself 0.1 s later, before forkcheck "
    "signalled it: the outcome is that of its own end)";

const json& variant_named(const json& report, const std::string& case_id, const std::string& name) {
  for (const auto& c : report["cases"])
    if (c["id"] == case_id)
      for (const auto& v : c["variants"])
        if (v["name"] == name) return v;
  throw std::runtime_error("no variant " + name);
}

std::string tree_facts_of(const json& v) {
  const Variant m = read_variant(v);
  return tree_facts(m.watchdog, m.outcome);
}

TEST(ReportView, TreeFactsInOneLine) {
  const json r = synthetic_report();
  EXPECT_EQ(tree_facts_of(variant_named(r, "hang-case", "fork")), kBlocked);
  EXPECT_EQ(tree_facts_of(variant_named(r, "watchdog-outcomes", "fork-busy")), kWorking);
  EXPECT_EQ(tree_facts_of(variant_named(r, "watchdog-outcomes", "forkserver-late")), kLate);
  EXPECT_EQ(tree_facts_of(variant_named(r, "watchdog-outcomes", "spawn-channel")), "")
      << "no tree recorded";
  // Working but no deadline passed: it says nothing of a deadline.
  json v = variant_named(r, "watchdog-outcomes", "fork-busy");
  v["outcome"] = "ok";
  v["watchdog"]["deadline_passed"] = false;
  EXPECT_EQ(tree_facts_of(v).rfind("working when last looked at: ", 0), 0u) << tree_facts_of(v);
  v["watchdog"]["tree"] = {{"state", "blocked"}, {"cpu_s_in_window", 0.0}};
  EXPECT_EQ(tree_facts_of(v), "blocked: 0 ms of CPU");
  // What the threads waited in, when the supervisor could tell (/proc's syscall of each).
  v["watchdog"]["tree"]["waiting_in"] = "futex (2), wait4 (1)";
  EXPECT_EQ(tree_facts_of(v), "blocked: 0 ms of CPU waiting in futex (2), wait4 (1)");
  v["watchdog"]["tree"]["state"] = "working";
  EXPECT_EQ(tree_facts_of(v).substr(tree_facts_of(v).find(';')), "; in futex (2), wait4 (1)");
}

TEST(ReportView, AnEndOfItsOwnIsSaidOnceInTheMessageFromTheWatchdogsRecord) {
  const json report = synthetic_report();
  const json& late = variant_named(report, "watchdog-outcomes", "forkserver-late");
  EXPECT_EQ(ended_by_itself_text(read_as<Watchdog>(late["watchdog"])), kByItself);
  const std::string message = late["message"].get<std::string>();
  EXPECT_EQ(message.substr(message.size() - std::string(kByItself).size()), kByItself)
      << "the fixture's message is what the harness writes";
  for (const auto& r : {make_html_reporter(), make_markdown_reporter(), make_junit_reporter()}) {
    const std::string text = r->render(read_report(report));
    EXPECT_EQ(occurrences(text, "it ended by itself"), 1u) << r->file_name();
  }
}

TEST(ReportView, AMismatchSaysATimeoutWasNotAHang) {
  const json r = synthetic_report();
  EXPECT_EQ(mismatch_meaning(read_variant(variant_named(r, "watchdog-outcomes", "fork-busy"))),
            "the hazard did not show as documented here: expected hang, observed timeout (the "
            "deadline passed while the process tree was not blocked: not a hang)");
  EXPECT_EQ(mismatch_meaning(read_variant(variant_named(r, "watchdog-outcomes", "spawn-channel"))),
            "regression: the fixed behaviour broke: expected ok, observed protocol-error (the "
            "child sent something "
            "on its channel that is not a forkcheck message)");
  EXPECT_EQ(
      stacks_title(read_variant(variant_named(r, "watchdog-outcomes", "fork-busy"))).find("hung"),
      std::string::npos);
}

TEST(WatchdogOutcomes, HtmlShowsThemAsWhatTheyAre) {
  const json r = synthetic_report();
  const std::string html = make_html_reporter()->render(read_report(r));
  for (const char* css : {".o-timeout {", ".o-protocol-error {"})
    EXPECT_NE(html.find(css), std::string::npos) << css;
  const size_t legend = html.find("class=\"legend-row\"");
  ASSERT_NE(legend, std::string::npos);
  for (const char* sample :
       {"<span class=\"cell o-timeout\"", "<span class=\"cell o-protocol-error\""})
    EXPECT_NE(html.find(sample, legend), std::string::npos) << sample;
  // The matrix cells and the variant badges.
  EXPECT_NE(html.find("<div class=\"cell o-timeout mismatch\""), std::string::npos);
  EXPECT_NE(html.find("<div class=\"cell o-protocol-error mismatch\""), std::string::npos);
  EXPECT_NE(html.find("timeout \u2717 expected hang"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"badge o-protocol-error mismatch\">"), std::string::npos);
  for (const char* line : {kBlocked, kWorking, kLate})
    EXPECT_NE(html.find(">" + html_escape(line) + "</dd>"), std::string::npos) << line;
  EXPECT_NE(html.find(html_escape("not JSON: <unterminated> object")), std::string::npos);
  EXPECT_NE(html.find("<pre class=\"protocol-line\">" +
                      html_escape("{\"type\":\"step\" <junk> & \\x01 | pipes") + "</pre>"),
            std::string::npos);
  EXPECT_EQ(html.find("<junk>"), std::string::npos);
  EXPECT_NE(html.find("pid 7 tid 7 forkcheck-repro [S futex_do_wait] in syscall futex"),
            std::string::npos);
  EXPECT_NE(html.find("pid 9 tid 10 reader [S pipe_read] in syscall read"), std::string::npos);
  EXPECT_NE(html.find("<summary>stacks of the process tree at the deadline, while it was still "
                      "working (1 threads"),
            std::string::npos);
  EXPECT_EQ(occurrences(html, "<summary>stacks of the hung process tree"), 1u) << "only the hang's";
}

TEST(WatchdogOutcomes, MarkdownShowsThemAsWhatTheyAre) {
  const std::string md = make_markdown_reporter()->render(read_report(synthetic_report()));
  EXPECT_NE(md.find("**fork-busy**: timeout \u2717 expected hang \u26a0\ufe0f"), std::string::npos);
  EXPECT_NE(md.find("**spawn-channel**: protocol-error \u2717 expected ok"), std::string::npos);
  EXPECT_NE(md.find("observed timeout (the deadline passed while the process tree was not "
                    "blocked: not a hang)"),
            std::string::npos);
  EXPECT_NE(md.find("- observed **timeout**"), std::string::npos);
  for (const char* line : {kBlocked, kWorking, kLate})
    EXPECT_NE(md.find("- process tree: " + std::string(line) + "\n"), std::string::npos) << line;
  EXPECT_NE(md.find("- protocol error: not JSON: &lt;unterminated&gt; "
                    "object\n\n```text\n{\"type\":\"step\" <junk> & \\x01 | pipes\n```"),
            std::string::npos);
  EXPECT_NE(md.find("pid 7 tid 7 forkcheck-repro [S futex_do_wait] in syscall futex\n"),
            std::string::npos);
  EXPECT_NE(md.find("stacks of the process tree at the deadline, while it was still working:"),
            std::string::npos);
  EXPECT_NE(md.find("- hung at "), std::string::npos) << "the step hang, as in HTML";
}

TEST(WatchdogOutcomes, JunitFailsThemAndSaysWhichItWas) {
  pugi::xml_document doc;
  const std::string xml = make_junit_reporter()->render(read_report(synthetic_report()));
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  std::map<std::string, pugi::xml_node> tc;
  for (auto s : doc.child("testsuites").children("testsuite"))
    for (auto t : s.children("testcase"))
      tc[std::string(t.attribute("classname").value()) + "/" + t.attribute("name").value()] = t;
  auto busy = tc["watchdog-outcomes/fork-busy"].child("failure");
  ASSERT_TRUE(busy);
  EXPECT_STREQ(busy.attribute("type").value(), "timeout");
  EXPECT_NE(std::string(busy.attribute("message").value())
                .find("observed timeout (the deadline passed while the process tree was not "
                      "blocked: not a hang)"),
            std::string::npos)
      << busy.attribute("message").value();
  const std::string busy_body = busy.text().get();
  EXPECT_NE(busy_body.find(std::string("process tree: ") + kWorking), std::string::npos)
      << busy_body;
  EXPECT_NE(busy_body.find("pid 9 tid 10 reader [S pipe_read] in syscall read"), std::string::npos)
      << busy_body;
  EXPECT_EQ(busy_body.find("hung"), std::string::npos) << busy_body;

  auto channel = tc["watchdog-outcomes/spawn-channel"].child("failure");
  ASSERT_TRUE(channel);
  EXPECT_STREQ(channel.attribute("type").value(), "protocol-error");
  EXPECT_NE(std::string(channel.attribute("message").value())
                .find("observed protocol-error (the child sent something on its channel that is "
                      "not a forkcheck message)"),
            std::string::npos);
  EXPECT_NE(std::string(channel.text().get())
                .find("protocol error: not JSON: <unterminated> object\n  line: {\"type\":\"step\" "
                      "<junk> & \\x01 | pipes"),
            std::string::npos)
      << channel.text().get();

  // Passing testcases carry the tree's facts beside their output.
  auto late = tc["watchdog-outcomes/forkserver-late"];
  ASSERT_TRUE(late);
  EXPECT_FALSE(late.child("failure"));
  EXPECT_NE(std::string(late.child("system-out").text().get())
                .find(std::string("process tree: ") + kLate),
            std::string::npos);
  const std::string hang_out = tc["hang-case/fork"].child("system-out").text().get();
  EXPECT_NE(hang_out.find(std::string("process tree: ") + kBlocked), std::string::npos) << hang_out;
  EXPECT_NE(hang_out.find("[S futex_do_wait] in syscall futex"), std::string::npos) << hang_out;
}

TEST(WatchdogOutcomes, JsonKeepsEveryWatchdogField) {
  const json back = json::parse(make_json_reporter()->render(read_report(synthetic_report())));
  const json& busy = variant_named(back, "watchdog-outcomes", "fork-busy");
  EXPECT_EQ(busy["outcome"], "timeout");
  EXPECT_EQ(busy["watchdog"]["tree"]["state"], "working");
  EXPECT_EQ(busy["watchdog"]["tree"]["looks"], 600);
  EXPECT_EQ(busy["stacks"][0]["syscall"], "read");
  EXPECT_EQ(variant_named(back, "watchdog-outcomes", "spawn-channel")["protocol_error"]["why"],
            "not JSON: <unterminated> object");
  EXPECT_EQ(
      variant_named(back, "watchdog-outcomes", "forkserver-late")["watchdog"]["exited_by_itself"],
      true);
}

// The published schema knows every outcome forkcheck can write (repros/core/outcome.h), and the
// watchdog's new fields. Read from the source tree.
TEST(Schema, KnowsEveryOutcomeAndTheWatchdogFields) {
  const std::filesystem::path path = FC_REPORT_SCHEMA;
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const json schema = json::parse(in);
  const json& outcomes = schema["$defs"]["outcome"]["enum"];
  for (Outcome o : {Outcome::kOk, Outcome::kError, Outcome::kCrash, Outcome::kHang,
                    Outcome::kTimeout, Outcome::kProtocolError, Outcome::kSkip})
    EXPECT_NE(std::find(outcomes.begin(), outcomes.end(), to_string(o)), outcomes.end())
        << to_string(o);
  for (const char* word : {"timeout", "protocol-error"})
    EXPECT_NE(schema["$defs"]["outcome"]["description"].get<std::string>().find(word),
              std::string::npos)
        << word;
  const json& variant = schema["$defs"]["variant"]["properties"];
  const json& watchdog = variant["watchdog"]["properties"];
  EXPECT_EQ(watchdog["tree"]["properties"]["state"]["enum"],
            json({"blocked", "sleeping", "working", "starved", "unknown"}));
  for (const char* k : {"still_s", "window_s", "cpu_s_in_window", "cpu_s", "processes", "threads",
                        "longest_still_s", "looks"})
    EXPECT_TRUE(watchdog["tree"]["properties"].contains(k)) << k;
  EXPECT_EQ(watchdog["exited_by_itself"]["type"], "boolean");
  EXPECT_EQ(watchdog["deadline_to_end_s"]["type"], "number");
  EXPECT_EQ(variant["protocol_error"]["required"], json({"line", "why"}));
  EXPECT_EQ(variant["stacks"]["items"]["properties"]["syscall"]["type"], "string");
}

// --- the chart ---------------------------------------------------------------------------------

TEST(SvgChart, OnePolylinePerSeriesAndEscapedLabels) {
  const std::string svg =
      svg_line_chart({{"worker <0>", {1, 0.5, 0.25}}, {"w1", {0.9, 0.4, 0.2}}, {"single", {0.3}}},
                     {"t & t", "step", "loss"});
  EXPECT_EQ(occurrences(svg, "<polyline"), 2u);
  EXPECT_EQ(occurrences(svg, "<circle"), 1u);
  EXPECT_NE(svg.find("worker &lt;0&gt;"), std::string::npos);
  EXPECT_NE(svg.find("t &amp; t"), std::string::npos);
}

TEST(Sources, AWebAddressBecomesALinkAndAnythingElseStaysText) {
  json r = synthetic_report();
  r["cases"][0]["source"] = {{"title", "issue"},
                             {"author", "someone"},
                             {"document", ""},
                             {"url", "https://github.com/pytorch/pytorch/issues/1"}};
  r["cases"][1]["source"] = {
      {"title", "other"}, {"author", "x"}, {"document", "001"}, {"url", "javascript:alert(1)"}};
  const std::string html = make_html_reporter()->render(read_report(r));
  EXPECT_NE(
      html.find("<a href=\"https://github.com/pytorch/pytorch/issues/1\">\u201cissue\u201d</a> by "
                "someone</dd>"),
      std::string::npos);
  EXPECT_EQ(html.find("javascript:"), std::string::npos);
  EXPECT_NE(html.find("\u201cother\u201d by x (document 001)"), std::string::npos);
  const std::string md = make_markdown_reporter()->render(read_report(r));
  EXPECT_NE(md.find("by someone <https://github.com/pytorch/pytorch/issues/1>"), std::string::npos);
  EXPECT_EQ(md.find("javascript:"), std::string::npos);
}

}  // namespace
}  // namespace fc::reports
