// The key finding first (reports/finding.h) in report.html and summary.md: before the matrix, red
// (CAUTION) when something failed and green (NOTE) otherwise, its fix on a line of its own, and
// never cut from summary.md. The catalog's Markdown-style `inline code` shown as <code> in the
// HTML, escaped first: a backticked tag stays text.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "read_text.h"
#include "reports/finding.h"
#include "reports/reporter.h"
#include "reports/synthetic_report.h"
#include "reports/text.h"

namespace fc::reports {
namespace {

using fc::test_text::occurrences;
using nlohmann::json;
using testing::huge_report;
using testing::synthetic_report;
using testing::variant;

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

// junit.xml's failure of a user's program carries the fix the key finding names, where CI shows
// failures; one with no fix to show says none.
TEST(KeyFinding, JunitsFailureOfAProgramCarriesItsFix) {
  json report = exec_report("hang");
  const std::string xml = make_junit_reporter()->render(read_report(report));
  const std::string fix = key_finding(read_report(report)).fix;
  ASSERT_FALSE(fix.empty());
  EXPECT_NE(xml.find("fix: " + fix), std::string::npos) << xml;
  report["cases"][0]["variants"][0]["stacks"] = json::array();  // no stacks: no libgomp seen
  const std::string plain = make_junit_reporter()->render(read_report(report));
  EXPECT_EQ(key_finding(read_report(report)).fix, "");
  EXPECT_EQ(plain.find("fix: "), std::string::npos) << plain;
}

// A process stuck on a lock its fork copied: the fix for a worker multiprocessing forked is its
// start method; for a bare os.fork(), which no start method changes, another way to start it.
TEST(KeyFinding, ALockCopiedByAForkSaysHowToStartTheChildByWhatForkedIt) {
  auto report_forked_at = [](const json& stack) {
    json report = exec_report("hang");
    json& v = report["cases"][0]["variants"][0];
    v["stacks"] = json::array();
    v["watchdog"]["stuck"] = {{"pid", 41}, {"ppid", 40}, {"threads", 1}, {"wait", "futex"}};
    const json fork = {
        {"seq", 1}, {"stack", stack}, {"threads", json::array({{{"name", "holder"}}})}};
    // The code that forked stands outside the main guard.
    v["details"]["fork_guards"] = {{{"pid", 40}, {"seq", 1}, {"guard", "unguarded"}, {"line", 7}}};
    v["python"] = {{"processes",
                    json::array({{{"pid", 40}, {"born", "exec"}, {"forks", json::array({fork})}},
                                 {{"pid", 41}, {"ppid", 40}, {"born", "fork"}, {"fork_seq", 1}}})}};
    return key_finding(read_report(report)).fix;
  };
  const json user = {{"file", "/w/job.py"}, {"line", 7}, {"function", "<module>"}};
  const json popen = {{"file", "/usr/lib/python3.11/multiprocessing/popen_fork.py"},
                      {"line", 66},
                      {"function", "_launch"}};
  const std::string bare = report_forked_at(json::array({user}));
  EXPECT_EQ(bare.find("First put the code"), std::string::npos) << "no guard step for os.fork";
  EXPECT_NE(bare.find("was forked by os.fork() itself, which no start method changes: start the "
                      "child with multiprocessing.get_context(\"spawn\").Process"),
            std::string::npos)
      << bare;
  EXPECT_EQ(bare.find("the workers with spawn"), std::string::npos) << bare;
  const std::string pool = report_forked_at(json::array({user, popen}));
  EXPECT_NE(pool.find("First put the code that starts them"), std::string::npos) << pool;
  EXPECT_NE(pool.find("Start the workers with spawn or forkserver"), std::string::npos) << pool;
  EXPECT_EQ(pool.find("os.fork()"), std::string::npos) << pool;
  // No stack that forked: which it was is not known, and the usual advice stands.
  const std::string unknown = report_forked_at(json::array());
  EXPECT_NE(unknown.find("Start the workers with spawn"), std::string::npos) << unknown;
}

// Interrupted (Ctrl-C) during a stall: a process stuck for good gets its fix as a hang's would,
// unless the stall ended (it worked again), when nothing proves it stuck any more.
TEST(KeyFinding, AnInterruptDuringAStallThatNeverEndedKeepsTheStuckProcesssFix) {
  json report = exec_report("hang");
  json& v = report["cases"][0]["variants"][0];
  v["outcome"] = "skip";
  v["interrupted"] = true;
  v["message"] = "not finished: forkcheck was interrupted by SIGINT after 9.0 s and killed it";
  v["stacks"] = json::array();
  v["stall"] = {{"kind", "process"},
                {"after_s", 1.5},
                {"process", {{"pid", 41}, {"threads", 2}, {"wait", "futex"}}}};
  Finding f = key_finding(read_report(report));
  EXPECT_EQ(f.headline, "exec: " + v["message"].get<std::string>());
  EXPECT_NE(f.fix.find("pid 41's threads all wait on locks private to the process"),
            std::string::npos)
      << f.fix;
  // Neither ended well nor failed: summary.md says it did not run to its end.
  const std::string md = make_markdown_reporter()->render(read_report(report));
  EXPECT_NE(md.find("it did not run to its end"), std::string::npos) << md;
  EXPECT_EQ(md.find("it ended well"), std::string::npos) << md;
  EXPECT_EQ(md.find("loss curves"), std::string::npos) << "an exec draws no charts";
  v["stall"]["resumed_after_s"] = 3.0;
  f = key_finding(read_report(report));
  EXPECT_EQ(f.fix, "") << "it worked again after its stall";
}

// The headline is the why of a hang or timeout: its first clause, what followed it (a stuck
// process, the signals) and the parenthesised facts left to the report.
TEST(KeyFinding, AHangsHeadlineIsItsWhyAlone) {
  struct Row {
    const char* outcome;
    std::string message, headline;
  };
  const Row rows[] = {
      {"hang",
       "blocked when its 20.0 s deadline passed: the whole tree had been still for 18.0 s; pid 7 "
       "[python3] can never go on by itself: its one thread has waited on a futex private to it, "
       "with no timeout, for 18.0 s (nothing but a signal could wake it); SIGTERM ended it",
       "exec: hang: blocked when its 20.0 s deadline passed: the whole tree had been still for "
       "18.0 s"},
      {"timeout",
       "still working when its 2.0 s deadline passed: a timeout, not a hang; SIGTERM "
       "ended it",
       "exec: timeout: still working when its 2.0 s deadline passed: a timeout, not a hang"},
      {"hang",
       "the whole tree had been still for 3.0 s, past the 3.0 s a stall may last (--hang-after) "
       "(called after 3.1 s); SIGTERM ended it",
       "exec: hang: the whole tree had been still for 3.0 s, past the 3.0 s a stall may last"},
  };
  for (const auto& r : rows) {
    json report = exec_report(r.outcome);
    report["cases"][0]["variants"][0]["message"] = r.message;
    EXPECT_EQ(key_finding(read_report(report)).headline, r.headline) << r.message;
  }
}

// A hang in libgomp: spawn is the fix, but where a worker's function is defined where a spawned
// worker cannot find it (details.worker_homes, read from the script), moving it comes first.
TEST(KeyFinding, TheLibgompFixSaysFirstToMoveAWorkerSpawnCouldNotFind) {
  json report = exec_report("hang");
  EXPECT_EQ(key_finding(read_report(report)).fix,
            "a process waits inside libgomp (GNU OpenMP), whose thread pool does not survive "
            "fork: start the workers with spawn or forkserver "
            "(multiprocessing.get_context(\"spawn\")), or run no parallel torch op in the parent "
            "before it forks");
  json& details = report["cases"][0]["variants"][0]["details"];
  details["worker_homes"] = {{{"pid", 10},
                              {"function", "train"},
                              {"file", "/w/train.py"},
                              {"line", 12},
                              {"home", "main-guard"}},
                             {{"pid", 11},
                              {"function", "train"},
                              {"file", "/w/train.py"},
                              {"line", 12},
                              {"home", "main-guard"}}};
  EXPECT_EQ(key_finding(read_report(report)).fix,
            "a process waits inside libgomp (GNU OpenMP), whose thread pool does not survive "
            "fork: 'train' (train.py:12) is defined under `if __name__ == \"__main__\":`, which a "
            "spawn or forkserver worker does not run (it imports the main script again and finds "
            "only what its top level defines): move it to module level, above the __main__ guard; "
            "then start the workers with spawn or forkserver "
            "(multiprocessing.get_context(\"spawn\")), or run no parallel torch op in the parent "
            "before it forks")
      << "each function said once";
  // A method of a class defined inside a function: the class is what must move, and why.
  details["worker_homes"] = {{{"pid", 10},
                              {"function", "run"},
                              {"file", "/w/train.py"},
                              {"line", 14},
                              {"home", "nested"},
                              {"class", "Trainer"},
                              {"class_line", 12}}};
  EXPECT_NE(key_finding(read_report(report))
                .fix.find("class 'Trainer' (train.py:12), whose method 'run' the worker runs, is "
                          "defined inside another function, and pickle cannot name what is local "
                          "to a function, so spawn and forkserver cannot send it to a worker: move "
                          "it to module level; then start"),
            std::string::npos)
      << key_finding(read_report(report)).fix;
  details["worker_homes"] = {{{"pid", 10}, {"function", "train"}, {"home", "module"}},
                             {{"pid", 11}, {"function", "train"}, {"home", "unknown"}}};
  EXPECT_EQ(key_finding(read_report(report)).fix.find("module level"), std::string::npos)
      << "found where it is, or not known: nothing to move";
}

// A timeout in a sleep says it slept; an error's headline is the program's own words whole,
// parentheses and all, only its exit status left to the report.
TEST(KeyFinding, AnErrorKeepsTheProgramsParenthesesAndASleepSaysItSlept) {
  struct Row {
    const char* outcome;
    std::string message, headline;
  };
  const Row rows[] = {
      {"error", "worker loader-0 (pid 18765) is killed by signal: 9 (exit status 1)",
       "exec: error: worker loader-0 (pid 18765) is killed by signal: 9"},
      {"timeout",
       "asleep when its 4.0 s deadline passed: pid 7 [python3] thread 8 sleeps in "
       "clock_nanosleep, a wait that ends by itself in 2.1 s: a timeout, not a hang; SIGTERM "
       "ended it",
       "exec: timeout: asleep when its 4.0 s deadline passed: pid 7 [python3] thread 8 sleeps in "
       "clock_nanosleep, a wait that ends by itself in 2.1 s: a timeout, not a hang"},
  };
  for (const auto& r : rows) {
    json report = exec_report(r.outcome);
    report["cases"][0]["variants"][0]["message"] = r.message;
    EXPECT_EQ(key_finding(read_report(report)).headline, r.headline) << r.message;
  }
}

// What the tree was doing when time was called is a fact of the finding (the terminal, issue.md),
// the same line the other reports show; a program that ended ok has none.
TEST(KeyFinding, AHangSaysWhatItsTreeWasDoing) {
  json report = exec_report("hang");
  report["cases"][0]["variants"][0]["watchdog"] = {{"tree",
                                                    {{"state", "blocked"},
                                                     {"still_s", 28.0},
                                                     {"window_s", 1.0},
                                                     {"cpu_s_in_window", 0.0004},
                                                     {"processes", 3},
                                                     {"threads", 7},
                                                     {"waiting_in", "futex (6), wait4 (1)"}}}};
  const auto facts = key_finding(read_report(report)).facts;
  const std::string line =
      "process tree: blocked for 28.0 s: 0.4 ms of CPU in the last 1.0 s, 3 processes, 7 threads "
      "waiting in futex (6), wait4 (1)";
  EXPECT_NE(std::find(facts.begin(), facts.end(), line), facts.end());
  EXPECT_NE(
      make_issue_reporter()->render(read_report(report)).find("- process tree: blocked for 28.0 s"),
      std::string::npos);
  report["cases"][0]["variants"][0]["outcome"] = "ok";
  for (const auto& fact : key_finding(read_report(report)).facts)
    EXPECT_EQ(fact.rfind("process tree:", 0), std::string::npos) << fact;
}

// Time spent waiting for a CPU is said; "slowed, not stuck" only where no wait was proven endless
// (a deadlock found on a busy machine is still a deadlock).
TEST(KeyFinding, AnOverloadedMachineIsNoExcuseForAProvenDeadlock) {
  json report = exec_report("hang");
  json& v = report["cases"][0]["variants"][0];
  v["duration_s"] = 12.0;
  v["watchdog"] = {{"activity", {{"run_queue_s", 3.8}}}};
  const auto said = [&report] {
    for (const auto& fact : key_finding(read_report(report)).facts)
      if (fact.find("for a CPU") != std::string::npos) return fact;
    return std::string();
  };
  EXPECT_EQ(said(),
            "its threads waited 3.8 s in all for a CPU: the machine was overloaded (it was "
            "slowed, not stuck)");
  v["wait_chain"] = {{"end", "cycle"}, {"closed", {1, 2}}};
  EXPECT_EQ(said(), "its threads waited 3.8 s in all for a CPU: the machine was overloaded");
  // A report that does not say how long the run took: no share of it can be claimed.
  v.erase("duration_s");
  EXPECT_EQ(said(), "");
}

// --- report.html -------------------------------------------------------------------------------

// A user's program's summary.md and report.html open with how it ended, not the catalog's counts
// and badges (no fix misbehaved, no harness failed: the program did).
TEST(SubjectSummary, SaysHowTheProgramEndedNotHowACatalogDid) {
  for (const char* outcome : {"ok", "hang"}) {
    const json r = exec_report(outcome);
    const std::string md = make_markdown_reporter()->render(read_report(r));
    const std::string html = make_html_reporter()->render(read_report(r));
    for (const std::string& text : {md, html}) {
      for (const char* catalog :
           {"1 cases", "variants", "outcomes differ from expectation", "a fix misbehaved",
            "every fix behaved", "expected ok", "expected</dt>", "expected **",
            "Cases by start method", " mismatch\""})
        EXPECT_EQ(text.find(catalog), std::string::npos) << catalog << " in\n" << text;
    }
    if (std::string(outcome) == "ok") {
      EXPECT_NE(md.find("the program: ok (exited 0) \u00b7 it ended well"), std::string::npos)
          << md;
    } else {
      EXPECT_NE(md.find("**the program: hang (blocked when its 30.0 s deadline passed)** \u00b7 "
                        "**it did not end well**"),
                std::string::npos)
          << md;
      EXPECT_NE(html.find("<span class=\"pill bad\">it did not end well</span>"),
                std::string::npos);
    }
  }
}

TEST(HtmlFinding, ComesFirstRedWithItsFixOnItsOwnLine) {
  const json r = exec_report("hang");
  const Finding f = key_finding(read_report(r));
  ASSERT_TRUE(f.bad);
  ASSERT_FALSE(f.fix.empty());
  const std::string html = make_html_reporter()->render(read_report(r));
  const size_t at = html.find("<section class=\"key-finding bad\" id=\"key-finding\">");
  ASSERT_NE(at, std::string::npos) << html.substr(0, 6000);
  EXPECT_LT(html.find("</header>"), at);
  EXPECT_LT(at, html.find("id=\"matrix\""));
  EXPECT_LT(at, html.find("class=\"overview\"")) << "before the counts";
  const std::string section = html.substr(at, html.find("</section>", at) - at);
  EXPECT_NE(section.find(html_escape(f.headline)), std::string::npos) << section;
  for (const auto& fact : f.facts)
    EXPECT_NE(section.find("<li>" + html_escape(fact) + "</li>"), std::string::npos) << fact;
  EXPECT_NE(section.find("<p class=\"kf-fix\"><b>Fix:</b> " + html_escape(f.fix) + "</p>"),
            std::string::npos)
      << section;
  EXPECT_EQ(occurrences(html, "id=\"key-finding\""), 1u);
}

TEST(HtmlFinding, GreenWhenNothingFailed) {
  const std::string html = make_html_reporter()->render(read_report(exec_report("ok")));
  EXPECT_NE(html.find("<section class=\"key-finding good\" id=\"key-finding\">"),
            std::string::npos);
  EXPECT_EQ(html.find("key-finding bad"), std::string::npos);
  EXPECT_EQ(html.find("class=\"kf-fix\""), std::string::npos)
      << "no fix claimed without its reason";
}

TEST(HtmlFinding, ACatalogRunLeadsWithItToo) {
  const std::string html = make_html_reporter()->render(read_report(synthetic_report()));
  const size_t at = html.find("<section class=\"key-finding bad\" id=\"key-finding\">");
  ASSERT_NE(at, std::string::npos) << "the synthetic report has a regression";
  EXPECT_LT(at, html.find("<table class=\"matrix\">"));
  EXPECT_NE(html.find(html_escape(key_finding(read_report(synthetic_report())).headline), at),
            std::string::npos);
}

TEST(HtmlLayout, AViewportAndWideContentScrollingInItsOwnBox) {
  const std::string html = make_html_reporter()->render(read_report(synthetic_report()));
  EXPECT_NE(html.find("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"),
            std::string::npos);
  EXPECT_NE(html.find("<div class=\"scroll\"><table class=\"matrix\">"), std::string::npos);
  EXPECT_NE(html.find("<div class=\"scroll\"><table class=\"workers\">"), std::string::npos);
  EXPECT_NE(html.find(".scroll { overflow-x: auto;"), std::string::npos);
  EXPECT_NE(html.find("@media (max-width: 600px)"), std::string::npos);
  EXPECT_NE(html.find("<td data-method=\"fork\">"), std::string::npos)
      << "a narrow screen names each start method above its cells";
}

// --- Markdown-style `code` in the HTML ---------------------------------------------------------

TEST(HtmlInlineCode, BacktickedCatalogTextIsCodeAndStaysEscaped) {
  json r = synthetic_report();
  json& c = r["cases"][0];
  c["mechanism"] = "the parent calls `omp_pause_resource_all()` & then `fork()`";
  c["reported"] = "a quote with `<script>alert(1)</script>` in backticks";
  json& v = c["variants"][0];
  v["description"] = "as `fork`, with `KMP_INIT_AT_FORK=FALSE`";
  v["expected_why"] = "an unmatched ` backtick stays as it is, and so does `` an empty pair";
  const std::string html = make_html_reporter()->render(read_report(r));
  EXPECT_NE(html.find("<h3>Mechanism</h3><p>the parent calls <code>omp_pause_resource_all()</code> "
                      "&amp; then <code>fork()</code></p>"),
            std::string::npos);
  EXPECT_NE(html.find("<p>as <code>fork</code>, with <code>KMP_INIT_AT_FORK=FALSE</code></p>"),
            std::string::npos);
  EXPECT_NE(html.find("<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos) << "escaped first, then made code";
  EXPECT_NE(html.find("an unmatched ` backtick stays as it is, and so does `` an empty pair"),
            std::string::npos);
  EXPECT_EQ(html.find("`fork`"), std::string::npos) << "no literal backticks where code is meant";
}

TEST(HtmlInlineCode, ProgramOutputIsNotMarkdown) {
  json r = synthetic_report();
  r["cases"][0]["variants"][0]["message"] = "the program printed `this`";
  r["cases"][0]["variants"][0]["stdout"] = "`echo hi`\n";
  const std::string html = make_html_reporter()->render(read_report(r));
  EXPECT_NE(html.find("<dd>the program printed `this`</dd>"), std::string::npos);
  EXPECT_NE(html.find("`echo hi`"), std::string::npos);
}

// --- summary.md --------------------------------------------------------------------------------

TEST(MarkdownFinding, StartsWithACautionWithFactsAndTheFix) {
  const json r = exec_report("hang");
  const Finding f = key_finding(read_report(r));
  const std::string md = make_markdown_reporter()->render(read_report(r));
  const std::string head = "> [!CAUTION]\n> **" + md_inline(f.headline) + "**\n";
  EXPECT_EQ(md.rfind(head, 0), 0u) << md.substr(0, 800);
  for (const auto& fact : f.facts)
    EXPECT_NE(md.find("> - " + md_inline(fact) + "\n"), std::string::npos) << fact;
  const size_t fix = md.find(">\n> **Fix:** " + md_inline(f.fix) + "\n");
  ASSERT_NE(fix, std::string::npos) << md.substr(0, 1500);
  EXPECT_LT(fix, md.find("# forkcheck report"));
  EXPECT_LT(fix, md.find("## Cases by start method"));
  EXPECT_EQ(occurrences(md, "[!CAUTION]"), 1u);
}

TEST(MarkdownFinding, ANoteWhenNothingFailed) {
  const std::string md = make_markdown_reporter()->render(read_report(exec_report("ok")));
  EXPECT_EQ(md.rfind("> [!NOTE]\n> **exec: ok: exited 0**\n\n# forkcheck report", 0), 0u)
      << md.substr(0, 400);
  EXPECT_EQ(md.find("[!CAUTION]"), std::string::npos);
  EXPECT_EQ(md.find("**Fix:**"), std::string::npos);
}

TEST(MarkdownFinding, SurvivesTheSizeCap) {
  const json r = huge_report();
  const Finding f = key_finding(read_report(r));
  ASSERT_GT(f.facts.size(), 3u) << "long facts: each case's long verdict reason";
  const std::string head = "> [!CAUTION]\n> **" + md_inline(f.headline) + "**\n>\n> - ";
  for (size_t cap : {kMarkdownMaxBytes, size_t{16 * 1024}}) {
    const std::string md = make_markdown_reporter(cap)->render(read_report(r));
    EXPECT_LE(md.size(), cap);
    EXPECT_EQ(md.rfind(head, 0), 0u) << cap << ": " << md.substr(0, 600);
    EXPECT_NE(md.find("left out to stay under the size limit"), std::string::npos) << cap;
  }
}

}  // namespace
}  // namespace fc::reports

namespace fc::reports {
namespace {

// The closing advice of a catalog run: spawn and forkserver, only where their fixes held, and
// never as the cure of a hazard that failed under them too.
TEST(CatalogFinding, TheAdviceNamesHazardsThatAreNotForks) {
  auto c = [](const char* id, nlohmann::json variants) {
    return nlohmann::json{
        {"id", id}, {"verdict", "reproduced"}, {"verdict_reason", "r"}, {"variants", variants}};
  };
  auto v = [](const char* name, const char* method, const char* role, const char* expected,
              const char* outcome) {
    return nlohmann::json{{"name", name},
                          {"start_method", method},
                          {"role", role},
                          {"expected", expected},
                          {"outcome", outcome}};
  };
  // Each count differs: 1 case whose hazard is fork's with 2 plain spawn/forkserver variants
  // (and 3 fixes in all), one whose plain fork is a fix (not fork's hazard), one that fails under
  // plain spawn too, one with no fork hazard at all.
  const nlohmann::json gomp = c(
      "gomp", {v("fork", "fork", "hazard", "hang", "hang"), v("spawn", "spawn", "fix", "ok", "ok"),
               v("forkserver", "forkserver", "fix", "ok", "ok"),
               v("fork-pause", "fork", "fix", "ok", "ok")});
  const nlohmann::json graceful =
      c("graceful", {v("fork", "fork", "fix", "ok", "ok"), v("spawn", "spawn", "fix", "ok", "ok"),
                     v("fork-join-no-deadline", "fork", "hazard", "hang", "hang")});
  const nlohmann::json shm = c("shm", {v("fork", "fork", "hazard", "crash", "crash"),
                                       v("spawn", "spawn", "hazard", "crash", "crash"),
                                       v("fork-bigger-shm", "fork", "fix", "ok", "ok")});
  const nlohmann::json hogwild =
      c("hogwild", {v("spawn", "spawn", "fix", "ok", "ok"),
                    v("private-copy", "forkserver", "hazard", "error", "error")});
  nlohmann::json report = {{"summary", {{"ok", true}}}, {"cases", {gomp, graceful, shm, hogwild}}};
  Finding f = key_finding(read_report(report));
  EXPECT_EQ(f.fix,
            "start workers with spawn or forkserver rather than fork where the hazard is fork's (1 "
            "case: gomp): each of their 2 spawn and forkserver variants was ok in this run (each "
            "case's page has the fix for its hazard); 1 case fails under spawn or forkserver as "
            "documented, and needs its own fix: shm");
  // A run of only the cases whose hazard is not fork's (--only): no advice about fork at all.
  report["cases"] = {graceful, hogwild};
  EXPECT_EQ(key_finding(read_report(report)).fix, "");
  // Only a case that fails under spawn: its own fix, no advice on start methods.
  report["cases"] = {shm, hogwild};
  EXPECT_EQ(key_finding(read_report(report)).fix,
            "1 case fails under spawn or forkserver as documented, and needs its own fix: shm "
            "(each case's page has it)");
  // A plain spawn variant of a fork case that broke: no advice resting on it.
  nlohmann::json broken = gomp;
  broken["variants"][1]["outcome"] = "hang";
  report["cases"] = {broken, shm};
  EXPECT_EQ(key_finding(read_report(report)).fix, "");
}

}  // namespace
}  // namespace fc::reports

namespace fc::reports {
namespace {

// Who waits on whom is the finding's first line, with each waiting thread's Python line and the
// chain's end: the queue joined before it was drained, as harness/supervise/wait_graph.h records
// it.
TEST(KeyFinding, TheWaitChainLeadsTheFactsWithEachThreadsLine) {
  json report = exec_report("hang");
  json& v = report["cases"][0]["variants"][0];
  auto frame = [](const char* file, int line, const char* function) {
    return json{{"file", file}, {"line", line}, {"function", function}};
  };
  v["stacks"] = json::array(
      {{{"pid", 41},
        {"tid", 41},
        {"name", "MainThread"},
        {"frames", json::array()},
        {"python",
         json::array({frame("/usr/lib/python3.11/multiprocessing/process.py", 149, "join"),
                      frame("/home/u/train.py", 18, "main")})}},
       {{"pid", 57},
        {"tid", 60},
        {"name", "QueueFeederThread"},
        {"frames", json::array()},
        {"python", json::array({frame("/usr/lib/python3.11/multiprocessing/connection.py", 367,
                                      "_send")})}}});
  v["wait_chain"] = {
      {"read", true},
      {"root", 41},
      {"links",
       json::array(
           {{{"pid", 41},
             {"tid", 41},
             {"thread", "python3"},
             {"call", "wait4"},
             {"on", "child"},
             {"child", 57},
             {"processes", {57}}},
            {{"pid", 57},
             {"tid", 57},
             {"thread", "python3"},
             {"call", "futex"},
             {"on", "own process"},
             {"processes", {57}}},
            {{"pid", 57},
             {"tid", 60},
             {"thread", "python3"},
             {"call", "write"},
             {"on", "files"},
             {"bytes", 1048576},
             {"processes", {41}},
             {"files",
              json::array(
                  {{{"fd", 7},
                    {"kind", "pipe"},
                    {"inode", 99},
                    {"waits_to", "write"},
                    {"holders",
                     json::array(
                         {{{"pid", 41}, {"fd", 6}, {"reads", true}, {"writes", false}},
                          {{"pid", 57}, {"fd", 7}, {"reads", false}, {"writes", true}}})}}})}}})},
      {"end", "cycle"},
      {"end_pid", 41},
      {"proven", true},
      {"closed", {41, 57}},
      {"processes", json::object()}};
  const Finding f = key_finding(read_report(report));
  ASSERT_FALSE(f.facts.empty());
  EXPECT_EQ(
      f.facts[0],
      "pid 41 waits in wait4 for its child pid 57 to end (train.py:18 in main); pid 57's main "
      "thread waits on a lock only its own threads can release; its thread QueueFeederThread "
      "waits to write 1 MiB to a pipe whose read end only pid 41 holds (connection.py:367 in "
      "_send): a deadlock across 2 processes, each waiting on another of them: none can ever "
      "go on");
  // Unproven, or not read: no chain line claims more than was seen.
  v["wait_chain"]["proven"] = false;
  v["wait_chain"]["unproven"] = "pid 57 catches a timer's signal (SIGALRM, SIGVTALRM or SIGPROF)";
  EXPECT_NE(
      key_finding(read_report(report))
          .facts[0]
          .find("back to pid 41 (a cycle, not proven a deadlock: pid 57 catches a timer's signal"),
      std::string::npos)
      << key_finding(read_report(report)).facts[0];
  v["wait_chain"] = {{"read", false}, {"why_not", "read on Linux only"}};
  EXPECT_EQ(key_finding(read_report(report)).facts[0].find("waits in wait4"), std::string::npos);
}

}  // namespace
}  // namespace fc::reports
