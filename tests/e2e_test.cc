// End to end: `forkcheck all` from the build tree, and what report.json says about this machine.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/supervise/supervisor.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* kAutogradMessage =
    "Unable to handle autograd's threading in combination with fork-based multiprocessing. See "
    "https://github.com/pytorch/pytorch/wiki/Autograd-and-Fork";

class ForkcheckAll : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = fs::temp_directory_path() / ("forkcheck-e2e-" + std::to_string(::getpid()));
    fs::remove_all(out_);
    fc::harness::LaunchSpec spec;
    spec.argv = {FC_FORKCHECK, "all", "--out", out_.string()};
    spec.timeout_s = 600;
    spec.channel = false;
    auto r = fc::harness::supervise(spec);
    exit_code_ = r.exit.code;
    stdout_ = r.out.text();
    std::ifstream in(out_ / "report.json");
    if (in) report_ = json::parse(in, nullptr, false);
  }
  static void TearDownTestSuite() { fs::remove_all(out_); }
  // Every test loops over the report's cases: without them each loop would pass having checked
  // nothing.
  void SetUp() override {
    ASSERT_TRUE(report_.is_object() && report_["cases"].is_array())
        << "no report.json: " << stdout_;
    ASSERT_GE(report_["cases"].size(), 19u) << "cases are missing from the run";
  }

  static const json& find_case(const std::string& id) {
    for (const auto& c : report_["cases"])
      if (c["id"] == id) return c;
    ADD_FAILURE() << "no case " << id;
    static json none;
    return none;
  }
  static const json& variant(const std::string& id, const std::string& name) {
    for (const auto& v : find_case(id)["variants"])
      if (v["name"] == name) return v;
    ADD_FAILURE() << "no variant " << id << "/" << name;
    static json none;
    return none;
  }

  static inline fs::path out_;
  static inline int exit_code_ = -1;
  static inline std::string stdout_;
  static inline json report_;
};

TEST_F(ForkcheckAll, ExitsZeroAndWritesTheReport) {
  EXPECT_EQ(exit_code_, 0) << stdout_;
  ASSERT_TRUE(report_.is_object());
  EXPECT_EQ(report_["schema_version"], "1.0");
  EXPECT_EQ(report_["tool"]["name"], "forkcheck");
  EXPECT_EQ(report_["summary"]["regressions"], 0);
  EXPECT_EQ(report_["summary"]["harness_failures"], 0);
  EXPECT_TRUE(fs::exists(out_ / "run.jsonl"));
  // one progress line per variant
  size_t lines = 0;
  for (size_t p = 0; (p = stdout_.find("(expected", p)) != std::string::npos; ++p) ++lines;
  EXPECT_EQ(lines, report_["summary"]["variants"].get<size_t>());
}

// Findings first and ticket-sized: the closing lines say what was found and where the reports
// are (the last line); issue.md stays under 10 KB and summary.md within a GitHub comment.
TEST_F(ForkcheckAll, EndsWithTheFindingAndFitsATicket) {
  EXPECT_NE(stdout_.find("inding: 19 cases: "), std::string::npos) << stdout_;
  const std::string last = stdout_.substr(stdout_.rfind('\n', stdout_.size() - 2) + 1);
  EXPECT_EQ(last.rfind("reports: " + (out_ / "issue.md").string(), 0), 0u) << last;
  std::ifstream issue(out_ / "issue.md", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(issue)), std::istreambuf_iterator<char>());
  EXPECT_LT(text.size(), 10u * 1000u);
  EXPECT_NE(text.find("cuda-before-fork: skipped ("), std::string::npos) << "a skip says why";
  EXPECT_LE(fs::file_size(out_ / "summary.md"), 65536u);
}

TEST_F(ForkcheckAll, EveryVariantHasTheRequiredFields) {
  for (const auto& c : report_["cases"]) {
    for (const char* k : {"id", "title", "source", "verdict", "variants"})
      EXPECT_TRUE(c.contains(k)) << k;
    EXPECT_TRUE(c["source"].contains("title"));
    EXPECT_TRUE(c["source"].contains("author"));
    for (const auto& v : c["variants"])
      for (const char* k : {"name", "start_method", "expected", "outcome", "message", "duration_s",
                            "exit", "stdout", "stderr", "details"})
        EXPECT_TRUE(v.contains(k)) << c["id"] << "/" << v.value("name", "?") << " lacks " << k;
  }
}

// Whose torch: the run records the Python torch beside the libtorch the cases ran against, and
// issue.md says both.
TEST_F(ForkcheckAll, TheReportSaysWhoseTorchTheCatalogRanAgainst) {
  const auto& env = report_["run"]["environment"];
  ASSERT_TRUE(env.contains("python_torch")) << env.dump(1).substr(0, 2000);
  EXPECT_FALSE(env["python_torch"].value("status", "").empty());
  std::ifstream issue(out_ / "issue.md", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(issue)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("- libtorch: "), std::string::npos) << text;
  EXPECT_NE(text.find("libtorch\\_cpu"), std::string::npos) << "the file, not only a version";
  EXPECT_NE(text.find("- Python torch: "), std::string::npos) << text;
}

// What the reports need to know of a case comes with it, from its catalog entry: the facts that
// may explain a change of it (forkcheck diff), and the one case the reports lead with.
TEST_F(ForkcheckAll, EachCaseCarriesItsTopicsAndOneIsFeatured) {
  size_t featured = 0;
  for (const auto& c : report_["cases"]) {
    ASSERT_TRUE(c.contains("environment_topics")) << c["id"];
    EXPECT_FALSE(c["environment_topics"].empty()) << c["id"];
    featured += c.value("featured", false) ? 1 : 0;
  }
  EXPECT_EQ(featured, 1u);
  EXPECT_EQ(find_case("tiny-nn-spawn").value("featured", false), true);
}

// Every variant that ran says how its process was started; on Linux the ones that set no
// environment were forked from their program's zygote, the others exec'd
// (harness/supervise/zygote.h).
TEST_F(ForkcheckAll, EveryVariantSaysHowItWasStarted) {
  for (const auto& c : report_["cases"])
    for (const auto& v : c["variants"]) {
      if (v["outcome"] == "skip") continue;
      const std::string via = v.value("started_via", "");
      EXPECT_TRUE(via == "exec" || via == "zygote") << c["id"] << "/" << v["name"];
#ifdef __linux__
      const bool sets_env = v.contains("env") && !v["env"].empty();
      EXPECT_EQ(via, sets_env ? "exec" : "zygote")
          << c["id"] << "/" << v["name"] << ": " << v.value("start_note", "");
#endif
    }
  EXPECT_EQ(report_["run"]["options"]["zygote"], true);
}

// Each hang is called at its announced step (allowance 1.5 s, then 0.5 s without CPU), and its
// stacks, taken before the kill, show where it is stuck.
TEST_F(ForkcheckAll, HangsCarryStacksThatShowWhereTheyAreStuck) {
  size_t hangs = 0;
  for (const auto& c : report_["cases"])
    for (const auto& v : c["variants"]) {
      if (v["outcome"] != "hang") continue;
      ++hangs;
      const std::string where = c["id"].get<std::string>() + "/" + v["name"].get<std::string>();
      ASSERT_TRUE(v.contains("hang")) << where << " was not caught at a step";
      EXPECT_LE(v["hang"]["within_s"].get<double>(), 1.5) << where;
      EXPECT_FALSE(v["stacks"].empty()) << where;
      EXPECT_TRUE(v["stacks_method"] == "eu-stack" || v["stacks_method"] == "gdb")
          << where << ": " << v.value("stacks_note", "");
    }
  EXPECT_GE(hangs, 4u);
  auto stacks_of = [&](const char* id, const char* name) {
    return variant(id, name)["stacks"].dump();
  };
  EXPECT_NE(stacks_of("gomp-fork-hang", "fork").find("libgomp"), std::string::npos);
  EXPECT_NE(stacks_of("torch-omp-pool-hang", "fork").find("libgomp"), std::string::npos);
  EXPECT_NE(stacks_of("static-init-fork", "fork").find("__cxa_guard_acquire"), std::string::npos);
}

TEST_F(ForkcheckAll, GompHangsUnderForkOnlyAndIsCaughtAtTheStep) {
  const auto& fork = variant("gomp-fork-hang", "fork");
  EXPECT_EQ(fork["outcome"], "hang");
  ASSERT_TRUE(fork.contains("hang"));
  EXPECT_NE(fork["hang"]["step"].get<std::string>().find("OpenMP"), std::string::npos);
  EXPECT_FALSE(
      fork["watchdog"]["deadline_passed"].get<bool>());  // caught early, not at the timeout
  EXPECT_EQ(variant("gomp-fork-hang", "spawn")["outcome"], "ok");
  EXPECT_EQ(variant("gomp-fork-hang", "forkserver")["outcome"], "ok");
  EXPECT_EQ(find_case("gomp-fork-hang")["verdict"], "reproduced");
}

TEST_F(ForkcheckAll, AutogradErrorIsLibtorchsOwnMessageWithTheDeviceBackend) {
  const auto& v = variant("autograd-after-fork", "fork-device-backend");
  EXPECT_EQ(v["outcome"], "error");
  EXPECT_NE(v["message"].get<std::string>().find(kAutogradMessage), std::string::npos)
      << v["message"];
  for (const auto& w : v["details"]["workers"]) EXPECT_EQ(w["status"], "error");
}

TEST_F(ForkcheckAll, CpuOnlyForkIsReportedHonestly) {
  const auto& v = variant("autograd-after-fork", "fork");
  const json& accel = v["details"]["accelerator_devices"];
  if (accel == 0) {
    EXPECT_EQ(v["expected"], "ok");
    EXPECT_EQ(v["outcome"], "ok");
    EXPECT_NE(v["expected_why"].get<std::string>().find("no non-CPU device"), std::string::npos);
    // no device threads: the parent's thread count did not grow with backward()
    EXPECT_EQ(v["details"]["parent_threads_after_training"],
              v["details"]["parent_threads_before_training"]);
    EXPECT_GT(variant("autograd-after-fork",
                      "fork-device-backend")["details"]["parent_threads_after_training"]
                  .get<int>(),
              variant("autograd-after-fork",
                      "fork-device-backend")["details"]["parent_threads_before_training"]
                  .get<int>());
  } else {
    EXPECT_EQ(v["outcome"], "error");
  }
  EXPECT_EQ(variant("autograd-after-fork", "spawn")["outcome"], "ok");
  EXPECT_EQ(variant("autograd-after-fork", "forkserver")["outcome"], "ok");
}

TEST_F(ForkcheckAll, TinyNnTrainsInFiveWorkersUnderSpawnAndForkserver) {
  for (const char* name : {"spawn", "forkserver"}) {
    const auto& v = variant("tiny-nn-spawn", name);
    EXPECT_EQ(v["outcome"], "ok") << name << ": " << v["message"];
    ASSERT_EQ(v["details"]["workers"].size(), 5u) << name;
    std::set<int> pids;
    for (const auto& w : v["details"]["workers"]) {
      EXPECT_EQ(w["status"], "ok");
      EXPECT_EQ(w["result"]["message"], "train finished");
      const auto& losses = w["result"]["losses"];
      ASSERT_GE(losses.size(), 10u);
      EXPECT_LT(losses.back().get<double>(), losses.front().get<double>());
      EXPECT_GT(w["result"]["param_norm"].get<double>(), 0.0);
      pids.insert(w["pid"].get<int>());
    }
    EXPECT_EQ(pids.size(), 5u) << "five distinct worker processes";
    // What the reports show of it, as the case put it: a row and a loss curve per worker.
    const auto& tables = v["details"]["tables"];
    ASSERT_EQ(tables.size(), 1u) << name;
    ASSERT_EQ(tables[0]["rows"].size(), 5u) << name;
    for (size_t i = 0; i < 5; ++i) {
      const auto& cells = tables[0]["rows"][i]["cells"];
      EXPECT_EQ(cells[1], v["details"]["workers"][i]["pid"]) << name;
      EXPECT_EQ(cells[4], v["details"]["workers"][i]["result"]["losses"].back()) << name;
      EXPECT_EQ(tables[0]["rows"][i]["status"], "ok");
    }
    ASSERT_EQ(v["details"]["charts"].size(), 1u) << name;
    EXPECT_EQ(v["details"]["charts"][0]["series"].size(), 5u) << name;
  }
  EXPECT_EQ(variant("tiny-nn-spawn", "fork-device-backend")["outcome"], "error");
  EXPECT_EQ(find_case("tiny-nn-spawn")["verdict"], "reproduced");
}

// Every verdict sentence claims only what happened: each variant it names as failed, ok, a fix
// that was ok, not run, or observed as something is exactly that in the same report.
TEST_F(ForkcheckAll, EveryVerdictSentenceClaimsOnlyOutcomesThatHappened) {
  ASSERT_TRUE(report_.contains("cases"));
  size_t claims = 0;
  for (const auto& c : report_["cases"]) {
    const std::string id = c["id"].get<std::string>();
    const std::string reason = c["verdict_reason"].get<std::string>();
    std::map<std::string, std::string> outcome;
    for (const auto& v : c["variants"])
      outcome[v["name"].get<std::string>()] = v["outcome"].get<std::string>();
    // The sections of the sentence, each up to the next one.
    const std::vector<std::string> heads = {"failed as documented: ", "ok here, as expected: ",
                                            "fixes ok: ", "not run: ", "partial run: "};
    std::map<std::string, std::string> section;
    for (const auto& h : heads) {
      const auto at = reason.find(h);
      if (at == std::string::npos) continue;
      auto end = reason.size();
      for (const auto& other : heads)
        if (auto o = reason.find("; " + other, at + h.size()); o != std::string::npos && o < end)
          end = o;
      section[h] = reason.substr(at + h.size(), end - at - h.size());
    }
    auto items = [](const std::string& s) {
      std::vector<std::string> out;
      for (size_t p = 0; p <= s.size();) {
        const auto q = s.find("; ", p);
        out.push_back(s.substr(p, q == std::string::npos ? std::string::npos : q - p));
        if (q == std::string::npos) break;
        p = q + 2;
      }
      return out;
    };
    for (const auto& item : items(section["failed as documented: "])) {
      if (item.empty()) continue;
      const auto sp = item.rfind(' ');
      ASSERT_NE(sp, std::string::npos) << id << ": " << reason;
      const std::string name = item.substr(0, sp), said = item.substr(sp + 1);
      ASSERT_TRUE(outcome.count(name)) << id << ": no variant " << name << " in: " << reason;
      EXPECT_EQ(outcome[name], said) << id << ": " << reason;
      EXPECT_NE(said, "ok") << id << ": " << reason;
      ++claims;
    }
    for (const char* h : {"ok here, as expected: ", "fixes ok: "})
      for (const auto& name : items(section[h])) {
        if (name.empty()) continue;
        ASSERT_TRUE(outcome.count(name)) << id << ": no variant " << name << " in: " << reason;
        EXPECT_EQ(outcome[name], "ok") << id << "/" << name << ": " << reason;
        ++claims;
      }
    for (const auto& item : items(section["not run: "]))
      for (const auto& [name, o] : outcome)
        if (item.rfind(name + ": ", 0) == 0) {
          EXPECT_EQ(o, "skip") << id << "/" << name << ": " << reason;
          ++claims;
        }
    // "NAME expected E, observed O": a miss or a regression, said as it happened.
    for (const auto& [name, o] : outcome)
      for (auto p = reason.find(name + " expected "); p != std::string::npos;
           p = reason.find(name + " expected ", p + 1)) {
        if (p > 0 && reason[p - 1] != ' ') continue;
        const auto obs = reason.find(", observed ", p);
        ASSERT_NE(obs, std::string::npos) << reason;
        EXPECT_EQ(reason.compare(obs + 11, o.size(), o), 0) << id << "/" << name << ": " << reason;
        ++claims;
      }
    // A verdict of a complete run never calls itself partial, nor "every" anything.
    if (!c.contains("not_selected")) {
      EXPECT_EQ(reason.find("partial"), std::string::npos) << reason;
    }
    EXPECT_EQ(reason.find("every hazard"), std::string::npos) << reason;
  }
  EXPECT_GT(claims, 20u) << "the sentences were read";
}

}  // namespace
