// `forkcheck watch` judges, in every format, on a run log made by hand from fork records that went
// through the harness's own rules (pairing, hazards, --allow): the verdict fails on a hazardous
// fork not allowed, JUnit has a <failure> per such fork with the full advice, the HTML and the
// Markdown put a red finding first with each hazard kind's fix, and an allowed kind fails nothing.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include "harness/watch/fork_events.h"
#include "harness/watch/fork_hazards.h"
#include "read_text.h"
#include "reports/reporter.h"
#include "reports/run_log.h"
#include "reports/text.h"
#include "reports/watch_view.h"

namespace fc {
namespace {

using fc::test_text::occurrences;
using json = nlohmann::json;

json fork_event(int pid, int child, uint64_t t, uint64_t seq, json threads, json cuda) {
  return {{"ev", "fork"},
          {"pid", pid},
          {"t", t},
          {"img", "aa"},
          {"seq", seq},
          {"tid", pid},
          {"tname", "main"},
          {"main", true},
          {"thread_list", threads},
          {"threads", threads.size()},
          {"runtimes", json::array()},
          {"cuda", std::move(cuda)},
          {"cmd", "python3 train.py"},
          {"child", child}};
}

// Three forks of pid 10: 11 with another thread running (threads), 12 with CUDA initialised as
// well (threads, cuda), 13 single-threaded (safe).
json watched_forks(const std::vector<std::string>& allow) {
  const json main_thread = {{"tid", 10}, {"name", "main"}};
  const json loader = {{"tid", 20}, {"name", "loader"}};
  const json no_cuda = {{"loaded", false}};
  const json cuda = {{"loaded", true}, {"initialised", true}, {"devices", 1}};
  json forks = harness::pair_fork_events(
      {fork_event(10, 11, 100, 1, json::array({main_thread, loader}), no_cuda),
       fork_event(10, 12, 200, 2, json::array({main_thread, loader}), cuda),
       fork_event(10, 13, 300, 3, json::array({main_thread}), no_cuda)});
  harness::add_hazards(forks);
  harness::judge_forks(forks, allow);
  return forks;
}

// The report of `forkcheck watch` as watch_command.cc records it, folded like any run.
json watch_report(const std::vector<std::string>& allow, const std::string& outcome = "ok") {
  const json forks = watched_forks(allow);
  const json planned = {{"name", "watch"},
                        {"start_method", "none"},
                        {"role", "subject"},
                        {"expected", "ok"},
                        {"expected_why", "a program that works ends by itself with status 0"},
                        {"description", "python3 train.py"},
                        {"skip_reason", ""}};
  json variant = planned;
  variant["type"] = "variant";
  variant["case"] = "watch";
  variant["outcome"] = outcome;
  variant["message"] = outcome == "ok" ? "exited 0" : "Traceback (exit status 3)";
  variant["duration_s"] = 1.5;
  variant["exit"] = {{"code", outcome == "ok" ? 0 : 3}, {"signal", nullptr}};
  variant["details"] = {{"forks", forks},
                        {"watch",
                         {{"totals", harness::fork_totals(forks)},
                          {"findings", harness::hazard_findings(forks)},
                          {"allowed_kinds", allow}}}};
  const std::vector<json> lines = {
      {{"type", "run"}, {"tool", {{"name", "forkcheck"}, {"version", "0"}}}, {"command", "watch"}},
      {{"type", "case"},
       {"id", "watch"},
       {"title", "forkcheck watch: python3 train.py"},
       {"variants", json::array({planned})}},
      variant,
      {{"type", "end"}, {"duration_s", 2.0}}};
  return reports::fold_run_log(lines);
}

const json& the_variant(const json& report) { return report["cases"][0]["variants"][0]; }

std::vector<pugi::xml_node> failures(const pugi::xml_document& doc) {
  std::vector<pugi::xml_node> out;
  for (auto x : doc.select_nodes("//testcase/failure")) out.push_back(x.node());
  return out;
}

TEST(WatchVerdict, AHazardousForkFailsAProgramThatEndedOk) {
  const json r = watch_report({});
  EXPECT_EQ(the_variant(r)["outcome"], "ok") << "the outcome stays the program's own end";
  EXPECT_EQ(r["cases"][0]["verdict"], "failed");
  const std::string reason = r["cases"][0]["verdict_reason"].get<std::string>();
  EXPECT_NE(reason.find("2 hazardous forks"), std::string::npos) << reason;
  EXPECT_NE(reason.find("threads (forks 1, 2)"), std::string::npos) << reason;
  EXPECT_NE(reason.find("cuda (fork 2)"), std::string::npos) << reason;
  EXPECT_FALSE(r["summary"]["ok"].get<bool>());
  EXPECT_EQ(reports::watch_failing(reports::read_variant(the_variant(r))), 2u);
}

TEST(WatchVerdict, AllowedKindsFailNothingAndStayListed) {
  const json r = watch_report({"threads", "cuda"});
  EXPECT_EQ(r["cases"][0]["verdict"], "ok") << r["cases"][0]["verdict_reason"];
  EXPECT_TRUE(r["summary"]["ok"].get<bool>());
  const json& forks = the_variant(r)["details"]["forks"];
  ASSERT_EQ(forks.size(), 3u);
  EXPECT_TRUE(forks[0]["allowed"].get<bool>());
  EXPECT_TRUE(forks[1]["allowed"].get<bool>());
  // One kind allowed of the two on fork 2: that fork still fails.
  const json partly = watch_report({"threads"});
  EXPECT_EQ(partly["cases"][0]["verdict"], "failed");
  EXPECT_EQ(reports::watch_failing(reports::read_variant(the_variant(partly))), 1u);
}

TEST(WatchVerdict, AProgramThatFailedStaysFailedAndNamesTheHazardsToo) {
  const json r = watch_report({}, "error");
  EXPECT_EQ(r["cases"][0]["verdict"], "failed");
  const std::string reason = r["cases"][0]["verdict_reason"].get<std::string>();
  EXPECT_EQ(reason.rfind("error: Traceback", 0), 0u) << reason;
  EXPECT_NE(reason.find("it also made 2 hazardous forks"), std::string::npos) << reason;
}

TEST(WatchJunit, AFailurePerHazardousForkWithTheFullAdvice) {
  const std::string xml =
      reports::make_junit_reporter()->render(reports::read_report(watch_report({})));
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  const auto f = failures(doc);
  ASSERT_EQ(f.size(), 2u) << xml;
  EXPECT_EQ(doc.child("testsuites").attribute("failures").as_int(), 2);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"child 11", "(threads)"}, {"child 12", "(threads, cuda)"}};
  for (size_t i = 0; i < f.size(); ++i) {
    const std::string message = f[i].attribute("message").value();
    EXPECT_EQ(std::string(f[i].attribute("type").value()), "hazardous-fork");
    EXPECT_NE(message.find("hazardous fork " + expected[i].second), std::string::npos) << message;
    EXPECT_NE(message.find("fork " + std::to_string(i + 1) + ": pid 10 (python3 train.py) -> " +
                           expected[i].first),
              std::string::npos)
        << message;
    const std::string body = f[i].text().get();
    EXPECT_NE(body.find("why: the child has only the forking thread"), std::string::npos) << body;
    EXPECT_NE(body.find("fix:\n  - start the worker with spawn or forkserver"), std::string::npos)
        << body;
    EXPECT_NE(body.find("join the threads before forking"), std::string::npos) << body;
  }
  EXPECT_NE(std::string(f[1].text().get()).find("initialise CUDA only in the workers"),
            std::string::npos);
}

TEST(WatchJunit, AnAllowedForkPassesWithItsAdviceInSystemOut) {
  const std::string xml =
      reports::make_junit_reporter()->render(reports::read_report(watch_report({"threads"})));
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  const auto f = failures(doc);
  ASSERT_EQ(f.size(), 1u) << xml;  // fork 2: cuda is not allowed
  EXPECT_NE(std::string(f[0].attribute("message").value()).find("child 12"), std::string::npos);
  const auto allowed = doc.select_node("//testcase[@name='fork-1']").node();
  ASSERT_TRUE(allowed) << xml;
  EXPECT_FALSE(allowed.child("failure"));
  const std::string out = allowed.child("system-out").text().get();
  EXPECT_NE(out.find("allowed hazardous fork (threads; --allow threads)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("start the worker with spawn or forkserver"), std::string::npos) << out;
}

// The key finding first (red, with the first kind's fix), then watch's own section with each
// hazard kind's advice and fix and the forks; the failure is said once, in the key finding.
TEST(WatchHtml, ARedFindingFirstWithEachHazardKindsFix) {
  const json r = watch_report({});
  const std::string html = reports::make_html_reporter()->render(reports::read_report(r));
  const size_t key = html.find("<section class=\"key-finding bad\" id=\"key-finding\">");
  ASSERT_NE(key, std::string::npos) << html.substr(0, 4000);
  const std::string failure =
      reports::html_escape(reports::watch_failure(reports::read_variant(the_variant(r))));
  EXPECT_NE(html.find("watch: the program ended ok, but made " + failure, key), std::string::npos);
  EXPECT_NE(html.find("<b>Fix:</b> start the worker with spawn or forkserver", key),
            std::string::npos);
  const size_t finding = html.find("<section class=\"finding\" id=\"finding\">");
  ASSERT_NE(finding, std::string::npos) << html.substr(0, 4000);
  EXPECT_LT(html.find("</header>"), key);
  EXPECT_LT(key, finding);
  EXPECT_EQ(occurrences(html.substr(0, finding), failure), 1u)
      << "the failure is said once before watch's own section";
  EXPECT_NE(html.find("forkcheck watch failed: each hazard and its fix</h2><p>forkcheck exits 1.",
                      finding),
            std::string::npos);
  for (const auto& kind : the_variant(r)["details"]["watch"]["findings"]) {
    EXPECT_NE(html.find("id=\"hazard-" + kind["kind"].get<std::string>() + "\"", finding),
              std::string::npos);
    for (const auto& line : kind["fix"])
      EXPECT_NE(
          html.find("<li>" + reports::html_escape(line.get<std::string>()) + "</li>", finding),
          std::string::npos)
          << line;
  }
  EXPECT_NE(
      html.find(reports::html_escape("hazardous fork (threads, cuda): fork 2: pid 10"), finding),
      std::string::npos);
  EXPECT_NE(html.find("<span class=\"pill bad\">hazardous forks found</span>"), std::string::npos)
      << "the summary says so too";
  EXPECT_EQ(html.find("id=\"matrix\""), std::string::npos) << "a user's program: no catalog table";
}

// A program that failed by itself: the key finding says how it ended, watch's section says which
// hazards fail the watch.
TEST(WatchHtml, AProgramThatFailedItselfHasItsHazardsNamedBelow) {
  const json r = watch_report({}, "error");
  const std::string html = reports::make_html_reporter()->render(reports::read_report(r));
  const size_t key = html.find("<section class=\"key-finding bad\" id=\"key-finding\">");
  ASSERT_NE(key, std::string::npos);
  EXPECT_NE(html.find("watch: error: Traceback (exit status 3)", key), std::string::npos);
  const size_t finding = html.find("<section class=\"finding\" id=\"finding\">");
  ASSERT_NE(finding, std::string::npos);
  EXPECT_LT(key, finding);
  EXPECT_NE(html.find("<h2>forkcheck watch failed: 2 hazardous forks", finding), std::string::npos);
  EXPECT_NE(html.find("itself failed (error), and forked while it was not safe to as well: "
                      "forkcheck exits 1.",
                      finding),
            std::string::npos)
      << "watch exits 1 for a program that failed, as exec does";
}

TEST(WatchHtml, EveryHazardAllowedIsNotRed) {
  const std::string html = reports::make_html_reporter()->render(
      reports::read_report(watch_report({"threads", "cuda"})));
  EXPECT_NE(html.find("<section class=\"finding allowed\" id=\"finding\">"), std::string::npos);
  EXPECT_EQ(html.find("forkcheck watch failed"), std::string::npos);
  EXPECT_NE(html.find("allowed (--allow threads)"), std::string::npos);
  EXPECT_NE(html.find("initialise CUDA only in the workers"), std::string::npos)
      << "the fix, still";
}

TEST(WatchMarkdown, ACautionFirstWithEachHazardKindsFix) {
  const json r = watch_report({});
  const std::string md =
      reports::make_markdown_reporter(1024 * 1024)->render(reports::read_report(r));
  const std::string failure =
      reports::md_inline(reports::watch_failure(reports::read_variant(the_variant(r))));
  EXPECT_EQ(
      md.rfind("> [!CAUTION]\n> **watch: the program ended ok, but made " + failure + "**", 0), 0u)
      << md.substr(0, 3000);
  EXPECT_EQ(occurrences(md, "[!CAUTION]"), 1u) << "one alert: the key finding";
  EXPECT_NE(md.find(">\n> **Fix:** start the worker with spawn or forkserver"), std::string::npos);
  const size_t finding = md.find("## forkcheck watch failed: each hazard and its fix");
  ASSERT_NE(finding, std::string::npos) << md.substr(0, 3000);
  EXPECT_EQ(occurrences(md.substr(0, finding), failure), 1u)
      << "the failure is said once before watch's own section";
  EXPECT_NE(md.find("**hazardous forks found**"), std::string::npos) << "the summary says so too";
  for (const auto& kind : the_variant(r)["details"]["watch"]["findings"])
    for (const auto& line : kind["fix"])
      EXPECT_NE(md.find(reports::md_inline(line.get<std::string>()), finding), std::string::npos)
          << line;
  EXPECT_NE(md.find("- " + reports::md_inline("hazardous fork (threads): fork 1: pid 10"), finding),
            std::string::npos);
  // A program that failed by itself: its end first, the hazards named in watch's section.
  const std::string failed = reports::make_markdown_reporter(1024 * 1024)
                                 ->render(reports::read_report(watch_report({}, "error")));
  EXPECT_EQ(failed.rfind("> [!CAUTION]\n> **watch: error: Traceback (exit status 3)**", 0), 0u)
      << failed.substr(0, 600);
  EXPECT_NE(failed.find("## \u26d4 forkcheck watch failed: " + failure), std::string::npos);
  // Allowed: a note, not a caution.
  const std::string allowed = reports::make_markdown_reporter(1024 * 1024)
                                  ->render(reports::read_report(watch_report({"threads", "cuda"})));
  EXPECT_EQ(allowed.find("[!CAUTION]"), std::string::npos);
  EXPECT_EQ(allowed.rfind("> [!NOTE]", 0), 0u) << allowed.substr(0, 600);
  EXPECT_NE(allowed.find("## forkcheck watch: every hazardous fork was of a kind allowed"),
            std::string::npos);
}

// issue.md, the file made for the ticket, holds each hazardous fork, not only their number: its
// line, and for the first ones where it forked, which threads ran and the fix.
TEST(WatchIssueMd, EachHazardousForkWithWhereItForkedAndTheFix) {
  const json r = watch_report({});
  const std::string md = reports::make_issue_reporter()->render(reports::read_report(r));
  const size_t section = md.find("### Hazardous forks\n\n");
  ASSERT_NE(section, std::string::npos) << md;
  const reports::Variant v = reports::read_variant(the_variant(r));
  for (const reports::ForkEvent* f : reports::hazardous_forks(v)) {
    EXPECT_NE(md.find("- " + reports::md_inline(reports::fork_failure_message(*f)), section),
              std::string::npos)
        << reports::fork_failure_message(*f);
    EXPECT_NE(md.find(reports::md_code_block(reports::fork_advice_text(*f)), section),
              std::string::npos)
        << reports::fork_advice_text(*f);
  }
  EXPECT_NE(md.find("loader", section), std::string::npos) << "the thread that ran\n" << md;
  // Not a watch: no such section.
  json exec = r;
  exec["cases"][0]["variants"][0]["details"] = json::object();
  EXPECT_EQ(reports::make_issue_reporter()
                ->render(reports::read_report(exec))
                .find("### Hazardous forks"),
            std::string::npos);
}

TEST(WatchReports, NotAWatchNoFinding) {
  json r = watch_report({});
  r["cases"][0]["variants"][0]["details"] = json::object();  // `forkcheck exec`'s
  EXPECT_EQ(reports::make_html_reporter()->render(reports::read_report(r)).find("id=\"finding\""),
            std::string::npos);
  const std::string md =
      reports::make_markdown_reporter(1024 * 1024)->render(reports::read_report(r));
  EXPECT_EQ(md.find("forkcheck watch failed"), std::string::npos);
  EXPECT_EQ(md.find("no hazardous fork"), std::string::npos);
  EXPECT_EQ(md.find("### Hazardous forks"), std::string::npos);
  pugi::xml_document doc;
  ASSERT_TRUE(
      doc.load_string(reports::make_junit_reporter()->render(reports::read_report(r)).c_str()));
  EXPECT_TRUE(failures(doc).empty());
}

}  // namespace
}  // namespace fc
