// `forkcheck env` for a bug ticket (issue 18, item 6), from the outside: the Python side through
// the interpreter asked for, what forkcheck measures of the machine, and the risk notes those
// facts call for (the rules themselves: reports/ticket_environment_test.cc).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "harness/supervise/supervisor.h"
#include "reports/ticket_environment.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// --- forkcheck env from the outside ---------------------------------------------------------

struct Run {
  int code = -1;
  std::string out, err;
  double seconds = 0;
};

Run run(std::vector<std::string> argv, std::vector<std::pair<std::string, std::string>> env = {}) {
  fc::harness::LaunchSpec spec;
  spec.argv = std::move(argv);
  spec.env = std::move(env);
  spec.timeout_s = 240;
  spec.channel = false;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = fc::harness::supervise(spec);
  Run out{r.exit.code, r.out.text(), r.err.text()};
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

Run forkcheck(std::vector<std::string> args,
              std::vector<std::pair<std::string, std::string>> env = {}) {
  args.insert(args.begin(), FC_FORKCHECK);
  return run(std::move(args), std::move(env));
}

json parse(const Run& r) {
  json j = json::parse(r.out, nullptr, false);
  EXPECT_TRUE(j.is_object()) << r.out.substr(0, 2000) << "\n" << r.err;
  return j.is_object() ? j : json::object();
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// A throwaway interpreter: a shell script standing in for python.
struct FakePython {
  fs::path path;
  explicit FakePython(const std::string& name, const std::string& body) {
    path = fs::temp_directory_path() /
           ("forkcheck-env-test-" + name + "-" + std::to_string(::getpid()));
    std::ofstream(path) << "#!/bin/sh\n" << body;
    fs::permissions(path, fs::perms::owner_all);
  }
  ~FakePython() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

// An interpreter that has torch, among /usr/bin/python3 and the python3 in PATH; "" when none.
std::string python_with_torch(std::string& tried) {
  std::vector<std::string> candidates = {"/usr/bin/python3", "/usr/local/bin/python3"};
  if (const char* path = std::getenv("PATH")) {
    std::string dirs = path, dir;
    for (size_t start = 0; start <= dirs.size();) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      if (end > start) candidates.push_back(dirs.substr(start, end - start) + "/python3");
      start = end + 1;
    }
  }
  for (const auto& c : candidates) {
    if (::access(c.c_str(), X_OK) != 0) continue;
    tried += (tried.empty() ? "" : ", ") + c;
    if (run({c, "-c", "import torch"}).code == 0) return c;
  }
  return "";
}

// The machine's side and every key of the ticket environment, whatever Python there is.
TEST(EnvCli, JsonHasTheKeys) {
  auto r = forkcheck({"env", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json env = parse(r);
  for (const char* key : {"machine", "python", "risks", "libtorch", "threads", "start_methods"})
    EXPECT_TRUE(env.contains(key)) << key;
  const json& m = env["machine"];
  for (const char* key : {"dev_shm", "open_files", "cpus", "variables"})
    EXPECT_TRUE(m.contains(key)) << key;
  EXPECT_GE(m["cpus"]["online"].get<int>(), 1);
#ifdef __linux__
  EXPECT_GE(m["cpus"]["affinity"].get<int>(), 1);
  EXPECT_GT(m["dev_shm"]["size_bytes"].get<double>(), 0) << m["dev_shm"];
  EXPECT_GT(m["open_files"]["soft"].get<double>(), 0);
#endif
  const json& p = env["python"];
  EXPECT_EQ(p["asked"], "python3 on PATH");
  EXPECT_TRUE(p["status"] == "ok" || p["status"] == "no-python") << p.dump(2);
  EXPECT_TRUE(env["risks"].is_array());
}

TEST(EnvCli, TextIsShortAndHasEverySection) {
  auto r = forkcheck({"env"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s :
       {"forkcheck environment", "\nPython\n", "\nMachine (measured by forkcheck)\n", "\nRisks\n",
        "open files (ulimit -n)", "CPUs", "default start method"})
    EXPECT_TRUE(contains(r.out, s)) << s << "\n" << r.out;
  // Paste-sized: no build-settings block, a few dozen lines.
  EXPECT_FALSE(contains(r.out, "CXX_FLAGS")) << r.out;
  EXPECT_LT(std::count(r.out.begin(), r.out.end(), '\n'), 50) << r.out;
  EXPECT_LT(r.out.size(), 6000u) << r.out;
}

TEST(EnvCli, PythonThatDoesNotExistIsAUsageError) {
  for (const std::string& python :
       {std::string("/nonexistent/python3"), std::string("no-such-python-xyz")}) {
    auto r = forkcheck({"env", "--python", python});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(contains(r.err, python)) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(EnvCli, PythonThatPrintsGarbageIsAFailedProbe) {
  FakePython fake("garbage", "echo 'Hello from not-a-python'\necho '{\"half\": '\n");
  auto r = forkcheck({"env", "--python", fake.path.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "the probe failed")) << r.out;
  EXPECT_TRUE(contains(r.out, "Hello from not-a-python")) << r.out;
  EXPECT_TRUE(contains(r.out, "Machine (measured by forkcheck)")) << r.out;
  EXPECT_TRUE(contains(r.out, "libtorch")) << r.out;  // forkcheck's own side, still there
  const json env = parse(forkcheck({"env", "--json", "--python", fake.path.string()}));
  EXPECT_EQ(env["python"]["status"], "failed") << env["python"];
  EXPECT_FALSE(env["python"].contains("torch"));
}

TEST(EnvCli, PythonThatExitsBadlySaysHow) {
  FakePython fake("fails", "echo 'ImportError: libpython is broken here' >&2\nexit 3\n");
  const json env = parse(forkcheck({"env", "--json", "--python", fake.path.string()}));
  const std::string error = env["python"]["error"].get<std::string>();
  EXPECT_EQ(env["python"]["status"], "failed");
  EXPECT_TRUE(contains(error, "exit status 3")) << error;
  EXPECT_TRUE(contains(error, "libpython is broken here")) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(EnvCli, PythonThatHangsTimesOutAndSaysWhere) {
  FakePython fake("hangs", "echo 'forkcheck-probe-step: importing torch'\nexec sleep 300\n");
  auto r = forkcheck({"env", "--python", fake.path.string(), "--timeout", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LT(r.seconds, 60) << "no hang";
  EXPECT_TRUE(contains(r.out, "the probe timed out after 2.0 s while importing torch")) << r.out;
  EXPECT_TRUE(contains(r.out, "Machine (measured by forkcheck)")) << r.out;
}

TEST(EnvCli, NoPythonOnPathIsSaid) {
  auto r = forkcheck({"env", "--json"}, {{"PATH", "/nonexistent-forkcheck-test"}});
  ASSERT_EQ(r.code, 0) << r.err;
  const json env = parse(r);
  EXPECT_EQ(env["python"]["status"], "no-python") << env["python"];
  EXPECT_EQ(env["python"]["error"], "no python3 in PATH");
}

// The soft limit forkcheck was started with (it raises its own): what the user's program gets.
TEST(EnvCli, LowOpenFilesLimitIsNoted) {
  auto r = run({"/bin/sh", "-c", "ulimit -Sn 1024 && exec \"$0\" env --json", FC_FORKCHECK});
  ASSERT_EQ(r.code, 0) << r.err;
  const json env = parse(r);
  EXPECT_EQ(env["machine"]["open_files"]["soft"], 1024) << env["machine"];
  const bool file_system = env["python"].contains("torch") &&
                           env["python"]["torch"].value("sharing_strategy", "") == "file_system";
  if (file_system) GTEST_SKIP() << "torch's sharing strategy is file_system here: no note is due";
  EXPECT_NE(env["risks"].dump().find("open-files-low"), std::string::npos) << env["risks"];
  auto text = run({"/bin/sh", "-c", "ulimit -Sn 1024 && exec \"$0\" env", FC_FORKCHECK});
  EXPECT_TRUE(contains(text.out, "! the open-files limit (ulimit -n) is 1024, under 4096"))
      << text.out;
}

TEST(EnvCli, OmpThreadsOverTheCpusAreNoted) {
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  const std::string threads = std::to_string(std::max(64u, 2 * cpus));
  auto r = forkcheck({"env"}, {{"OMP_NUM_THREADS", threads}});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "OMP_NUM_THREADS=" + threads)) << r.out;
#ifdef __linux__
  EXPECT_TRUE(contains(r.out, "CPUs in the affinity mask")) << r.out;
#endif
  EXPECT_TRUE(contains(r.out, "oversubscription")) << r.out;
  // And not without it.
  auto quiet = forkcheck({"env", "--json"}, {{"OMP_NUM_THREADS", "1"}});
  EXPECT_EQ(parse(quiet)["risks"].dump().find("threads-over-cpus"), std::string::npos) << quiet.out;
}

TEST(EnvCli, TorchSideWhenAnInterpreterHasTorch) {
  std::string tried;
  const std::string python = python_with_torch(tried);
  if (python.empty()) GTEST_SKIP() << "no interpreter with torch here (tried " << tried << ")";
  auto r = forkcheck({"env", "--json", "--python", python});
  ASSERT_EQ(r.code, 0) << r.err;
  const json p = parse(r)["python"];
  ASSERT_EQ(p["status"], "ok") << p.dump(2);
  const json& t = p["torch"];
  EXPECT_FALSE(t["version"].get<std::string>().empty());
  EXPECT_TRUE(t["debug"].is_boolean());
  EXPECT_TRUE(t.contains("cuda_build"));
  EXPECT_TRUE(t.contains("cudnn"));
  EXPECT_GE(t["threads"]["intra_op"].get<int>(), 1);
  EXPECT_FALSE(t["parallel_backend"].get<std::string>().empty());
  EXPECT_TRUE(contains(t["parallel_info"].get<std::string>(), "ATen"));
  EXPECT_TRUE(t["cuda"]["available"].is_boolean());
  EXPECT_FALSE(p["multiprocessing"]["default_start_method"].get<std::string>().empty());
  EXPECT_FALSE(p["python"]["version"].get<std::string>().empty());
  auto text = forkcheck({"env", "--python", python});
  for (const char* s : {"  torch  ", "torch threads", "torch CUDA", "default start method"})
    EXPECT_TRUE(contains(text.out, s)) << s << "\n" << text.out;
}

// An interpreter without torch is said to lack it; none other is used in its place.
TEST(EnvCli, InterpreterWithoutTorchSaysSo) {
  std::string tried;
  std::string python = python_with_torch(tried);
  if (python.empty() && ::access("/usr/bin/python3", X_OK) == 0) python = "/usr/bin/python3";
  if (python.empty()) GTEST_SKIP() << "no python3 here (tried " << tried << ")";
  // -S: without site-packages, so without torch and numpy.
  FakePython bare("bare", "exec " + python + " -S \"$@\"\n");
  auto r = forkcheck({"env", "--json", "--python", bare.path.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const json p = parse(r)["python"];
  ASSERT_EQ(p["status"], "ok") << p.dump(2);
  EXPECT_TRUE(p["torch"].contains("missing")) << p["torch"];
  EXPECT_EQ(p["interpreter"], bare.path.string());
  auto text = forkcheck({"env", "--python", bare.path.string()});
  EXPECT_TRUE(contains(text.out, "not installed for")) << text.out;
}

}  // namespace
