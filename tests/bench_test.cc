// `forkcheck bench` end to end: the figures it prints are the ones bench.json holds, every start
// method this platform has is measured, and what was not measured says so (null and a reason),
// never 0.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/supervise/supervisor.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(Bench, WritesEveryFigureWithThePythonPeerOrWhyNot) {
  const fs::path out =
      fs::temp_directory_path() / ("forkcheck-bench-" + std::to_string(::getpid()));
  fs::remove_all(out);
  LaunchSpec spec;
  spec.argv = {FC_FORKCHECK, "bench", "--repeat", "2", "--out", out.string()};
  spec.timeout_s = 400;
  spec.channel = false;
  auto r = supervise(spec);
  ASSERT_TRUE(r.exit.exited_ok()) << r.err.text();
  std::ifstream in(out / "bench.json");
  const json b = json::parse(in, nullptr, false);
  ASSERT_FALSE(b.is_discarded());
  const std::string table = r.out.text();
  for (const char* m : {"fork", "spawn", "forkserver"}) {
    const auto& s = b["start_latency_ms"][m];
    ASSERT_TRUE(s.is_object()) << m;
    EXPECT_GT(s["median"].get<double>(), 0) << m;
    EXPECT_LE(s["min"].get<double>(), s["median"].get<double>()) << m;
    EXPECT_LE(s["median"].get<double>(), s["max"].get<double>()) << m;
    EXPECT_EQ(s["n"], 2) << m;
    for (const char* kind : {"torch", "native"}) {
      const auto& w = b["workers"][kind][m];
      EXPECT_GT(w["rss_kib"]["median"].get<double>(), 0) << kind << " " << m;
#ifdef __linux__
      EXPECT_GT(w["pss_kib"]["median"].get<double>(), 0) << kind << " " << m;  // Linux has PSS
#endif
    }
    EXPECT_NE(table.find("forkcheck " + std::string(m) + ", torch worker"), std::string::npos);
  }
  // The Python peer, measured beside them, or the reason it was not.
  const auto& py = b["peers"]["python_spawn"];
  if (py.is_object() && py.contains("median")) {
    EXPECT_GT(py["median"].get<double>(), 0);
    EXPECT_NE(table.find("python multiprocessing spawn"), std::string::npos);
    EXPECT_GT(b["ratios"]["python_spawn_over_forkserver"].get<double>(), 0);
    // Like for like: Python's forkserver with torch preloaded, as forkcheck's has libtorch.
    const auto& preloaded = b["peers"]["python_forkserver_preload_torch"];
    ASSERT_TRUE(preloaded.is_object()) << b["peers"]["python"];
    EXPECT_GT(preloaded["median"].get<double>(), 0);
    EXPECT_NE(table.find("python forkserver, preload torch"), std::string::npos) << table;
    EXPECT_NE(table.find("torch preloaded (like for like) / forkcheck forkserver"),
              std::string::npos)
        << table;
    EXPECT_GT(b["ratios"]["python_forkserver_preload_torch_over_forkserver"].get<double>(), 0);
  } else {
    EXPECT_NE(table.find("Python peer"), std::string::npos) << table;
  }
  fs::remove_all(out);
}

}  // namespace
}  // namespace fc::harness
