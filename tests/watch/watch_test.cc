// `forkcheck watch`, from the outside: it flags exactly the hazardous forks of the test programs
// (tests/watch/*), names the runtime behind each, and leaves the program's output as it is
// without it. It judges: a hazardous fork fails a program that exited 0 (exit status 1, a JUnit
// <failure> per such fork, the finding first in the HTML and Markdown) unless --allow accepted its
// kind; a program that failed is a finding too (exit status 1, as under exec), its own status said
// in the last lines printed and kept in report.json.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include "harness/supervise/supervisor.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Ran {
  int code = -1;
  int signal = 0;
  std::string out, err;
};

Ran run(const std::vector<std::string>& argv, double timeout_s = 240) {
  LaunchSpec spec;
  spec.argv = argv;
  spec.timeout_s = timeout_s;
  spec.channel = false;
  auto r = supervise(spec);
  return {r.exit.code, r.exit.signal, r.out.text(), r.err.text()};
}

fs::path fresh_dir(const std::string& name) {
  auto d = fs::temp_directory_path() /
           ("forkcheck-watch-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

// `forkcheck watch --out DIR [--allow KIND]... -- command...`
Ran watch(const fs::path& out, const std::vector<std::string>& command,
          const std::vector<std::string>& allow = {}) {
  std::vector<std::string> argv = {FC_FORKCHECK, "watch", "--out", out.string()};
  for (const auto& kind : allow) argv.insert(argv.end(), {"--allow", kind});
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return run(argv);
}

std::string file_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// junit.xml's <failure> elements.
std::vector<pugi::xml_node> junit_failures(const fs::path& out, pugi::xml_document& doc) {
  EXPECT_TRUE(doc.load_file((out / "junit.xml").c_str()));
  std::vector<pugi::xml_node> f;
  for (auto x : doc.select_nodes("//testcase/failure")) f.push_back(x.node());
  return f;
}

json report(const fs::path& out) {
  std::ifstream in(out / "report.json");
  return json::parse(in);
}

// References into `rep`: keep the report in a variable of its own.
const json& variant(const json& rep) { return rep["cases"][0]["variants"][0]; }
const json& forks(const json& rep) { return variant(rep)["details"]["forks"]; }

size_t hazardous(const json& fs_) {
  size_t n = 0;
  for (const auto& f : fs_) n += f["hazards"].empty() ? 0 : 1;
  return n;
}

bool has_runtime(const json& fork, const std::string& runtime) {
  for (const auto& h : fork["hazards"])
    if (h.value("runtime", "") == runtime) return true;
  return false;
}

TEST(Watch, ThreadedForkWithoutExecIsFlaggedForkWithExecIsNot) {
  auto out = fresh_dir("threaded");
  Ran r = watch(out, {FC_WATCH_THREADED});
  ASSERT_EQ(r.code, 1) << "a hazardous fork fails the watch\n" << r.out << r.err;
  json rep = report(out);
  EXPECT_EQ(rep["cases"][0]["id"], "watch");
  const json& f = forks(rep);
  ASSERT_EQ(f.size(), 2u) << f.dump(2);

  EXPECT_FALSE(f[0]["exec"].get<bool>());
  ASSERT_EQ(f[0]["hazards"].size(), 1u) << f[0].dump(2);
  EXPECT_EQ(f[0]["hazards"][0]["kind"], "threads");
  EXPECT_NE(f[0]["hazards"][0]["what"].get<std::string>().find("fc_sleeper"), std::string::npos);
  EXPECT_EQ(f[0]["threads"], 2);
  EXPECT_EQ(f[0]["child_end"]["how"], "exited");
  EXPECT_EQ(f[0]["child_end"]["code"], 5);

  EXPECT_TRUE(f[1]["exec"].get<bool>());
  EXPECT_TRUE(f[1]["hazards"].empty()) << f[1].dump(2);
  EXPECT_EQ(f[1]["exec_path"], "/proc/self/exe");
  EXPECT_EQ(f[1]["child_end"]["code"], 0);

  EXPECT_EQ(variant(rep)["details"]["watch"]["totals"]["hazardous"], 1);
  // The printed summary: the hazardous fork in full, with what to do instead.
  EXPECT_NE(r.out.find("HAZARD  fork 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("spawn or forkserver"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("safe    fork 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("forkcheck watch: FAILED: 1 hazardous fork (threads) (exit status 1)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--allow threads"), std::string::npos) << r.out;

  // report.json: the program's own outcome, and the case failed because of the fork.
  EXPECT_EQ(variant(rep)["outcome"], "ok");
  EXPECT_EQ(rep["cases"][0]["verdict"], "failed");
  EXPECT_NE(rep["cases"][0]["verdict_reason"].get<std::string>().find("1 hazardous fork: threads"),
            std::string::npos)
      << rep["cases"][0]["verdict_reason"];
  EXPECT_FALSE(rep["summary"]["ok"].get<bool>());
  EXPECT_EQ(variant(rep)["details"]["watch"]["totals"]["failing"], 1);
  EXPECT_FALSE(f[0]["allowed"].get<bool>());
  ASSERT_GE(f[0]["advice"].size(), 2u) << f[0].dump(2);

  // JUnit: one failure, for fork 1, naming the hazard, the pid, the child and the command, and
  // carrying the fix.
  pugi::xml_document doc;
  const auto failures = junit_failures(out, doc);
  ASSERT_EQ(failures.size(), 1u) << file_text(out / "junit.xml");
  const std::string message = failures[0].attribute("message").value();
  for (const std::string& part :
       {std::string("hazardous fork (threads)"), "pid " + f[0]["pid"].dump(),
        "child " + f[0]["child"].dump(), std::string(FC_WATCH_THREADED)})
    EXPECT_NE(message.find(part), std::string::npos) << part << " in " << message;
  const std::string body = failures[0].text().get();
  EXPECT_NE(body.find("fix:\n  - start the worker with spawn or forkserver"), std::string::npos)
      << body;
  EXPECT_NE(body.find("join the threads before forking"), std::string::npos) << body;

  // The HTML and the Markdown: the finding first, with the fix.
  const std::string html = file_text(out / "report.html");
  const size_t finding = html.find("<section class=\"finding\" id=\"finding\">");
  ASSERT_NE(finding, std::string::npos);
  EXPECT_LT(finding, html.find("id=\"matrix\""));
  EXPECT_NE(html.find("join the threads before forking", finding), std::string::npos);
  const std::string md = file_text(out / "summary.md");
  const size_t caution = md.find("> [!CAUTION]");
  ASSERT_NE(caution, std::string::npos) << md;
  EXPECT_LT(caution, md.find("## Cases by start method"));
  EXPECT_NE(md.find("join the threads before forking", caution), std::string::npos) << md;

  // The published schema knows all of it (Debian's python3-jsonschema, when installed).
  if (run({"/usr/bin/python3", "-c", "import jsonschema"}, 60).code == 0) {
    Ran v = run(
        {"/usr/bin/python3", FC_VALIDATE_REPORT, FC_REPORT_SCHEMA, (out / "report.json").string()},
        60);
    EXPECT_EQ(v.code, 0) << v.out << v.err;
  }
  fs::remove_all(out);
}

TEST(Watch, AllowAcceptsOneKindKnowingly) {
  auto out = fresh_dir("allow");
  Ran r = watch(out, {FC_WATCH_THREADED}, {"threads"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  json rep = report(out);
  const json& f = forks(rep);
  ASSERT_EQ(f.size(), 2u) << f.dump(2);
  EXPECT_EQ(f[0]["hazards"].size(), 1u) << "still listed";
  EXPECT_TRUE(f[0]["allowed"].get<bool>());
  EXPECT_TRUE(f[0]["hazards"][0]["allowed"].get<bool>());
  EXPECT_EQ(rep["cases"][0]["verdict"], "ok") << rep["cases"][0]["verdict_reason"];
  EXPECT_EQ(variant(rep)["details"]["watch"]["allowed_kinds"], json::array({"threads"}));
  EXPECT_NE(r.out.find("ALLOWED fork 1"), std::string::npos) << r.out;
  pugi::xml_document doc;
  EXPECT_TRUE(junit_failures(out, doc).empty()) << file_text(out / "junit.xml");
  EXPECT_NE(file_text(out / "junit.xml").find("allowed hazardous fork (threads; --allow threads)"),
            std::string::npos);

  // Another kind allowed: this one still fails.
  r = watch(out, {FC_WATCH_THREADED}, {"cuda", "thread-pool"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  fs::remove_all(out);
}

TEST(Watch, AnUnknownHazardKindIsAUsageErrorAndWritesNothing) {
  auto out = fresh_dir("bad-allow");
  Ran r = watch(out, {FC_WATCH_THREADED}, {"libgomp"});
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_EQ(r.err,
            "forkcheck: error: watch: --allow libgomp: no such hazard kind (the kinds: "
            "thread-pool, threads, cuda)\n");
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(out));
}

TEST(Watch, HelpSaysWhatEachExitStatusMeansAndTheKinds) {
  Ran r = run({FC_FORKCHECK, "watch", "--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* part :
       {"--allow KIND", "Exit status, as exec's", "a hazardous fork of a kind not allowed",
        "the program failed", "its own exit status", "128+N", "thread-pool", "threads", "cuda"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << " in\n" << r.out;
}

TEST(Watch, OutputIsTheProgramsOwnAndItsFailureAFinding) {
  Ran plain = run({FC_WATCH_THREADED, "3"});
  ASSERT_EQ(plain.code, 3) << plain.err;
  auto out = fresh_dir("status");
  Ran watched = watch(out, {FC_WATCH_THREADED, "3"});
  EXPECT_EQ(watched.code, 1) << "the program failed: a finding, as under exec\n"
                             << watched.out << watched.err;
  json rep = report(out);
  EXPECT_EQ(variant(rep)["stdout"].get<std::string>(), plain.out);
  EXPECT_EQ(variant(rep)["stderr"].get<std::string>(), plain.err);
  EXPECT_EQ(variant(rep)["exit"]["code"], 3);
  EXPECT_EQ(rep["cases"][0]["verdict"], "failed");
  EXPECT_NE(
      rep["cases"][0]["verdict_reason"].get<std::string>().find("it also made 1 hazardous fork"),
      std::string::npos)
      << rep["cases"][0]["verdict_reason"];
  // The program's own status, said in the last lines.
  EXPECT_NE(watched.out.find("forkcheck watch: FAILED: the program failed (error, its own exit "
                             "status 3) (exit status 1); it also made 1 hazardous fork"),
            std::string::npos)
      << watched.out;
  fs::remove_all(out);
}

TEST(Watch, AProgramKilledByASignalIsAFindingThatNamesIt) {
  auto out = fresh_dir("signal");
  Ran r = watch(out, {FC_FAULT_CHILD, "abort"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const json rep = report(out);
  EXPECT_EQ(variant(rep)["outcome"], "crash");
  EXPECT_EQ(variant(rep)["exit"]["signal"], 6);
  EXPECT_NE(r.out.find("FAILED: the program failed (crash, killed by SIGABRT"), std::string::npos)
      << r.out;
  fs::remove_all(out);
}

// One rule for exec and watch: the same program gets the same exit status from both (a program
// that hangs past --timeout, exits 3, aborts, or ends ok), and its own end stays in report.json.
TEST(Watch, ExitsAsExecDoesForTheSameProgram) {
  struct Case {
    std::vector<std::string> program;
    int status;
    const char* outcome;
  };
  const std::vector<Case> cases = {{{FC_FAULT_CHILD, "hang"}, 1, "hang"},
                                   {{FC_FAULT_CHILD, "exit-message", "3", "why"}, 1, "error"},
                                   {{FC_FAULT_CHILD, "abort"}, 1, "crash"},
                                   {{FC_FAULT_CHILD, "exit", "0"}, 0, "ok"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.program[1]);
    Ran by[2];
    json reports[2];
    const char* commands[2] = {"exec", "watch"};
    for (int i = 0; i < 2; ++i) {
      const fs::path out = fresh_dir(std::string("same-") + commands[i]);
      std::vector<std::string> argv = {FC_FORKCHECK, commands[i], "--out", out.string()};
      argv.insert(argv.end(), {"--timeout", "1", "--"});
      argv.insert(argv.end(), c.program.begin(), c.program.end());
      by[i] = run(argv);
      reports[i] = report(out);
      fs::remove_all(out);
    }
    EXPECT_EQ(by[0].code, c.status) << "exec\n" << by[0].out << by[0].err;
    EXPECT_EQ(by[1].code, c.status) << "watch\n" << by[1].out << by[1].err;
    for (const auto& rep : reports) {
      EXPECT_EQ(variant(rep)["outcome"], c.outcome) << variant(rep).dump(2).substr(0, 2000);
      EXPECT_EQ(variant(rep)["exit"], variant(reports[0])["exit"]);
    }
    // The hang's own end, said by watch: forkcheck ended it at --timeout.
    if (std::string(c.outcome) == "hang") {
      EXPECT_NE(by[1].out.find("FAILED: the program failed (hang, ended by forkcheck: killed by"),
                std::string::npos)
          << by[1].out;
    }
  }
}

TEST(Watch, SpawnAndSingleThreadedForksAreNotFlagged) {
  auto out = fresh_dir("spawn");
  Ran r = watch(out, {FC_WATCH_SPAWN_ONLY});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const json rep = report(out);
  const json& f = forks(rep);
  // Its own fork+exec and fork without exec, and one fork in each "fork-once" child: the
  // posix_spawn'd one (empty environment), the execve'd one (no LD_PRELOAD), the vfork'd one.
  ASSERT_EQ(f.size(), 5u) << f.dump(2);
  EXPECT_EQ(hazardous(f), 0u) << f.dump(2);
  size_t in_children = 0, exec = 0;
  for (const auto& x : f) {
    in_children += x["command"].get<std::string>().find("fork-once") != std::string::npos;
    exec += x["exec"].get<bool>();
    EXPECT_EQ(x["child_end"]["code"], 0) << x.dump(2);
  }
  EXPECT_EQ(in_children, 3u) << "the watch must survive a scrubbed environment";
  EXPECT_EQ(exec, 1u);
  EXPECT_EQ(r.out.find("HAZARD"), std::string::npos) << r.out;
  fs::remove_all(out);
}

// The report's one fork: safe, with the forking thread alone alive.
void expect_one_single_threaded_fork(const json& rep) {
  ASSERT_EQ(forks(rep).size(), 1u) << forks(rep).dump(2);
  EXPECT_TRUE(forks(rep)[0]["hazards"].empty()) << forks(rep)[0].dump(2);
  EXPECT_EQ(forks(rep)[0]["threads"], 1);
}

TEST(Watch, OpenMPPoolIsFlaggedUntilPaused) {
  auto out = fresh_dir("omp");
  Ran r = watch(out, {FC_WATCH_OMP});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  json rep = report(out);
  ASSERT_EQ(forks(rep).size(), 1u) << forks(rep).dump(2);
  EXPECT_TRUE(has_runtime(forks(rep)[0], "libgomp")) << forks(rep)[0].dump(2);

  // omp_pause_resource_all ends the pool's threads: the fork is single-threaded again.
  r = watch(out, {FC_WATCH_OMP, "pause"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  expect_one_single_threaded_fork(report(out));
  fs::remove_all(out);
}

// A pool whose threads its own pthread_atfork prepare handler stops (OpenBLAS does): they are gone
// when the child is copied, and the fork is single-threaded; without the handler it is not.
TEST(Watch, ThreadsAPrepareHandlerStopsAreNotThereAtTheFork) {
  auto out = fresh_dir("atfork");
  Ran r = watch(out, {FC_WATCH_ATFORK_POOL});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  expect_one_single_threaded_fork(report(out));

  // Linked into the program, its handler registered before the shim's: it runs after the shim's
  // listing, and the threads it joined are left out all the same.
  r = watch(out, {FC_WATCH_ATFORK_POOL_LINKED});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  expect_one_single_threaded_fork(report(out));

  r = watch(out, {FC_WATCH_ATFORK_POOL, "unregistered"});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  const json rep = report(out);
  ASSERT_EQ(forks(rep).size(), 1u) << forks(rep).dump(2);
  EXPECT_EQ(forks(rep)[0]["threads"], 4) << forks(rep)[0].dump(2);
  EXPECT_EQ(hazardous(forks(rep)), 1u);
  fs::remove_all(out);
}

TEST(Watch, TorchForkAfterParallelOpNamesLibgomp) {
  auto out = fresh_dir("torch");
  Ran r = watch(out, {FC_WATCH_TORCH});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  const json rep = report(out);
  const json& f = forks(rep);
  ASSERT_EQ(f.size(), 1u) << f.dump(2);
  EXPECT_TRUE(has_runtime(f[0], "libgomp")) << f[0].dump(2);
  EXPECT_NE(r.out.find("libgomp: an OpenMP pool was active"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("omp_pause_resource_all"), std::string::npos) << r.out;
  fs::remove_all(out);
}

TEST(Watch, CudaCountsOnceInitialised) {
  auto out = fresh_dir("cuda");
  Ran r = watch(out, {FC_WATCH_CUDA, FC_WATCH_FAKE_LIBCUDA, "init"});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  json rep = report(out);
  const json& f = forks(rep);
  ASSERT_EQ(f.size(), 1u) << f.dump(2);
  EXPECT_EQ(f[0]["cuda"]["initialised"], true) << f[0].dump(2);
  ASSERT_EQ(f[0]["hazards"].size(), 1u) << f[0].dump(2);
  EXPECT_EQ(f[0]["hazards"][0]["kind"], "cuda");

  // Loaded but never initialised: the driver is there, the hazard is not.
  r = watch(out, {FC_WATCH_CUDA, FC_WATCH_FAKE_LIBCUDA});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  rep = report(out);
  const json& g = forks(rep);
  ASSERT_EQ(g.size(), 1u) << g.dump(2);
  EXPECT_EQ(g[0]["cuda"]["loaded"], true);
  EXPECT_EQ(g[0]["cuda"]["initialised"], false);
  EXPECT_TRUE(g[0]["hazards"].empty()) << g[0].dump(2);
  fs::remove_all(out);
}

bool python_has_torch() { return run({"/usr/bin/python3", "-c", "import torch"}, 120).code == 0; }

TEST(Watch, PythonMultiprocessingForkIsFlaggedSpawnIsNot) {
  if (!python_has_torch()) GTEST_SKIP() << "/usr/bin/python3 has no torch (python3-torch)";
  Ran plain = run({"/usr/bin/python3", FC_WATCH_MP_TORCH, "fork"});
  ASSERT_EQ(plain.code, 0) << plain.err;

  auto out = fresh_dir("py-fork");
  Ran r = watch(out, {"/usr/bin/python3", FC_WATCH_MP_TORCH, "fork"});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  json rep = report(out);
  EXPECT_EQ(variant(rep)["stdout"].get<std::string>(), plain.out);
  const json& f = forks(rep);
  ASSERT_EQ(hazardous(f), 1u) << f.dump(2);
  for (const auto& x : f) {
    if (!x["hazards"].empty()) {
      EXPECT_TRUE(has_runtime(x, "libgomp")) << x.dump(2);
    }
  }
  fs::remove_all(out);

  // spawn starts a fresh interpreter (vfork or fork, then exec at once): nothing to flag.
  out = fresh_dir("py-spawn");
  r = watch(out, {"/usr/bin/python3", FC_WATCH_MP_TORCH, "spawn"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const json spawned = report(out);
  EXPECT_EQ(hazardous(forks(spawned)), 0u) << forks(spawned).dump(2);
  EXPECT_EQ(r.out.find("HAZARD"), std::string::npos) << r.out;
  fs::remove_all(out);
}

// A newcomer's Python: a thread is running, then a multiprocessing Pool forks its two workers.
TEST(Watch, PythonPoolForkedAfterAThreadFailsWithAJunitFailurePerWorker) {
  auto out = fresh_dir("py-pool");
  Ran r = watch(out, {"/usr/bin/python3", FC_WATCH_MP_POOL, "fork"});
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  json rep = report(out);
  const json& f = forks(rep);
  ASSERT_EQ(hazardous(f), 2u) << f.dump(2);
  pugi::xml_document doc;
  const auto failures = junit_failures(out, doc);
  ASSERT_EQ(failures.size(), 2u) << file_text(out / "junit.xml");
  for (const auto& x : failures) {
    const std::string message = x.attribute("message").value();
    EXPECT_NE(message.find("hazardous fork (threads)"), std::string::npos) << message;
    EXPECT_NE(message.find(FC_WATCH_MP_POOL), std::string::npos) << message;
  }
  fs::remove_all(out);

  out = fresh_dir("py-pool-spawn");
  r = watch(out, {"/usr/bin/python3", FC_WATCH_MP_POOL, "spawn"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  rep = report(out);
  EXPECT_EQ(hazardous(forks(rep)), 0u) << forks(rep).dump(2);
  EXPECT_NE(r.out.find("forkcheck watch: ok: no hazardous fork (exit status 0)"), std::string::npos)
      << r.out;
  fs::remove_all(out);
}

TEST(Watch, WithoutACommandIsAUsageError) {
  Ran r = run({FC_FORKCHECK, "watch"});
  EXPECT_EQ(r.code, 2) << r.err;
  r = run({FC_FORKCHECK, "watch", "--", "/nonexistent/program"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("watch:"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fc::harness
