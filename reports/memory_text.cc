#include "reports/memory_text.h"

#include <algorithm>
#include <cstdlib>

#include "reports/report_view.h"
#include "reports/text.h"
#include "reports/ticket_environment.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

std::string kib_text(std::uint64_t kib) { return format_bytes(static_cast<double>(kib) * 1024); }

std::uint64_t kib(const json& sample, const char* key) {
  const json& v = member(sample, key);
  return v.is_number_unsigned() ? v.get<std::uint64_t>()
         : v.is_number_integer()
             ? static_cast<std::uint64_t>(std::max<long long>(0, v.get<long long>()))
             : 0;
}

const json* memory_of(const json& variant, int pid) {
  for (const auto& p : list(member(variant, "memory"), "processes"))
    if (member(p, "pid") == pid) return &p;
  return nullptr;
}

std::string pid_list(const std::vector<int>& pids) {
  std::string s;
  for (size_t i = 0; i < pids.size() && i < 6; ++i) s += (i ? ", " : "") + std::to_string(pids[i]);
  if (pids.size() > 6) s += ", ...";
  return s;
}

}  // namespace

std::string memory_growth_text(const std::vector<int>& pids, std::uint64_t from_kib,
                               std::uint64_t to_kib) {
  const bool one = pids.size() == 1;
  return std::string("the private memory of ") +
         (one ? "pid " + pid_list(pids)
              : std::to_string(pids.size()) + " processes (pids " + pid_list(pids) + ")") +
         " grew from " + kib_text(from_kib) + " to " + kib_text(to_kib) +
         (one ? "" : " each (their median)") + " since first seen, when " + (one ? "it" : "each") +
         " shared 64 MiB or more with other processes: copy-on-write, perhaps (a page a fork "
         "shares becomes private to whichever side writes it, and reading a Python object "
         "writes its reference count)";
}

std::string process_memory_text(const json& variant, int pid) {
  const json* m = memory_of(variant, pid);
  if (!m) return "";
  const json &last = member(*m, "last"), &peak = member(*m, "peak"), &first = member(*m, "first");
  std::string s =
      "RSS " + kib_text(kib(last, "rss_kib")) + ", private " + kib_text(kib(last, "private_kib")) +
      " at " + format_seconds(member(last, "at_s").is_number() ? last["at_s"].get<double>() : 0) +
      " (its last sample";
  if (kib(peak, "private_kib") > kib(last, "private_kib"))
    s += "; peak private " + kib_text(kib(peak, "private_kib"));
  if (member(*m, "samples").is_number() && (*m)["samples"].get<long long>() > 1)
    s += "; " + kib_text(kib(first, "private_kib")) + " private when first seen";
  return s + ")";
}

bool oom_killed(const json& variant, int pid) {
  for (const auto& k : list(member(member(variant, "memory"), "oom"), "killed"))
    if (member(k, "pid") == pid) return true;
  return false;
}

std::string oom_kill_text(const json& variant, int pid) {
  const json& oom = member(member(variant, "memory"), "oom");
  for (const auto& k : list(oom, "killed"))
    if (member(k, "pid") == pid) {
      // "Memory cgroup out of memory: Killed process 4242 (python3) total-vm:182168kB,
      // anon-rss:160524kB, ...": a cgroup's limit or the machine's, and its size then.
      const std::string log = field(k, "log");
      const bool cgroup = log.rfind("Memory cgroup out of memory", 0) == 0;
      std::string said =
          "the kernel's OOM killer (" + std::string(cgroup ? "its memory cgroup's limit was reached"
                                                           : "the machine was out of memory");
      if (const auto at = log.find("anon-rss:"); at != std::string::npos)
        said += "; its anonymous resident memory then: " +
                kib_text(std::strtoull(log.c_str() + at + 9, nullptr, 10));
      return said + ", by the kernel's log)";
    }
  if (member(oom, "kernel_log_read") == true) return "";
  std::string rose;
  for (const auto& c : list(oom, "cgroups")) {
    const json &before = member(c, "oom_kill_before"), &after = member(c, "oom_kill_after");
    if (!before.is_number_integer() || !after.is_number_integer() ||
        after.get<long long>() <= before.get<long long>())
      continue;
    const long long n = after.get<long long>() - before.get<long long>();
    std::string path = field(c, "cgroup");
    if (path.size() > 3 && path[2] == ':') path = path.substr(3);
    rose += (rose.empty() ? "" : "; ") + std::to_string(n) + " in memory cgroup " + path;
  }
  if (rose.empty()) return "";
  return "perhaps the kernel's OOM killer: it killed processes during the run (" + rose +
         "), but the kernel's log, which names them, could not be read";
}

std::string memory_growth_fact(const json& variant) {
  struct Grew {
    int pid;
    std::uint64_t from, to;
  };
  std::vector<Grew> grew;
  for (const auto& p : list(member(variant, "memory"), "processes")) {
    const json &first = member(p, "first"), &peak = member(p, "peak");
    const std::uint64_t from = kib(first, "private_kib"), to = kib(peak, "private_kib");
    const std::uint64_t shared = kib(first, "rss_kib") - std::min(kib(first, "rss_kib"), from);
    if (shared >= 64 * 1024 && to >= from + 256 * 1024 && to >= 4 * from)
      grew.push_back({member(p, "pid").get<int>(), from, to});
  }
  if (grew.empty()) return "";
  std::vector<int> pids;
  std::vector<std::uint64_t> from, to;
  for (const auto& g : grew) {
    pids.push_back(g.pid);
    from.push_back(g.from);
    to.push_back(g.to);
  }
  std::sort(from.begin(), from.end());
  std::sort(to.begin(), to.end());
  return memory_growth_text(pids, from[from.size() / 2], to[to.size() / 2]);
}

}  // namespace fc::reports
