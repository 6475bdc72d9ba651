// The memory facts in words (memory_text.h), on made-up records.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/memory_text.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

json sample(double at_s, int rss_mib, int private_mib) {
  return {{"at_s", at_s},
          {"rss_kib", rss_mib * 1024},
          {"pss_kib", rss_mib * 512},
          {"private_kib", private_mib * 1024}};
}

// pid 42: first seen sharing 900 MiB (RSS 1 GiB, private 100 MiB), peaking at 800 MiB private.
json variant(json oom) {
  json p = {{"pid", 42},
            {"ppid", 41},
            {"name", "python3"},
            {"samples", 5},
            {"first", sample(0.5, 1024, 100)},
            {"peak", sample(3.0, 1100, 800)},
            {"last", sample(3.5, 1000, 700)}};
  return {{"memory", {{"processes", json::array({p})}, {"oom", std::move(oom)}}}};
}

TEST(MemoryText, TheKernelsLogNamesTheVictimAndItsSize) {
  const json v = variant({{"kernel_log_read", true},
                          {"killed", json::array({{{"pid", 42},
                                                   {"log",
                                                    "Memory cgroup out of memory: Killed process "
                                                    "42 (python3) total-vm:182168kB, "
                                                    "anon-rss:160524kB, file-rss:5000kB"}}})}});
  EXPECT_TRUE(oom_killed(read_variant(v), 42));
  EXPECT_EQ(oom_kill_text(read_variant(v), 42),
            "the kernel's OOM killer (its memory cgroup's limit was reached; its anonymous "
            "resident memory then: 157 MiB, by the kernel's log)");
  EXPECT_FALSE(oom_killed(read_variant(v), 43));
  EXPECT_EQ(oom_kill_text(read_variant(v), 43), "") << "the log was read and does not name it";
}

TEST(MemoryText, WithoutTheLogOnlyARisenCounterIsSaidAndAsPerhaps) {
  const json risen = variant(
      {{"kernel_log_read", false},
       {"killed", json::array()},
       {"cgroups",
        json::array({{{"cgroup", "v1:/jobs/7"}, {"oom_kill_before", 2}, {"oom_kill_after", 3}}})}});
  EXPECT_EQ(oom_kill_text(read_variant(risen), 42),
            "perhaps the kernel's OOM killer: it killed processes during the run (1 in memory "
            "cgroup /jobs/7), but the kernel's log, which names them, could not be read");
  const json still = variant(
      {{"kernel_log_read", false},
       {"killed", json::array()},
       {"cgroups",
        json::array({{{"cgroup", "v1:/jobs/7"}, {"oom_kill_before", 2}, {"oom_kill_after", 2}}})}});
  EXPECT_EQ(oom_kill_text(read_variant(still), 42), "");
}

TEST(MemoryText, AProcessesSamplesAndItsGrowthSinceFirstSeen) {
  const json v = variant(json::object());
  EXPECT_EQ(process_memory_text(read_variant(v), 42),
            "RSS 1000 MiB, private 700 MiB at 3.5 s (its last sample; peak private 800 MiB; "
            "100 MiB private when first seen)");
  EXPECT_EQ(process_memory_text(read_variant(v), 7), "");
  const std::string grew = memory_growth_fact(read_variant(v));
  EXPECT_NE(grew.find("the private memory of pid 42 grew from 100 MiB to 800 MiB since first "
                      "seen"),
            std::string::npos)
      << grew;
  // Grown less than fourfold: not said.
  json small = v;
  small["memory"]["processes"][0]["peak"] = sample(3.0, 1100, 350);
  EXPECT_EQ(memory_growth_fact(read_variant(small)), "");
}

}  // namespace
}  // namespace fc::reports
