#include "reports/memory_text.h"

#include <algorithm>
#include <cstdlib>

#include "reports/text.h"
#include "reports/ticket_environment.h"

namespace fc::reports {
namespace {

std::string kib_text(std::uint64_t kib) { return format_bytes(static_cast<double>(kib) * 1024); }

std::uint64_t kib(long long n) { return n > 0 ? static_cast<std::uint64_t>(n) : 0; }

const ProcessSamples* memory_of(const Variant& variant, int pid) {
  if (!variant.memory) return nullptr;
  for (const ProcessSamples& p : variant.memory->processes)
    if (p.pid == pid) return &p;
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

std::string process_memory_text(const Variant& variant, int pid) {
  const ProcessSamples* m = memory_of(variant, pid);
  if (!m) return "";
  std::string s = "RSS " + kib_text(kib(m->last.rss_kib)) + ", private " +
                  kib_text(kib(m->last.private_kib)) + " at " + format_seconds(m->last.at_s) +
                  " (its last sample";
  if (m->peak.private_kib > m->last.private_kib)
    s += "; peak private " + kib_text(kib(m->peak.private_kib));
  if (m->samples > 1) s += "; " + kib_text(kib(m->first.private_kib)) + " private when first seen";
  return s + ")";
}

bool oom_killed(const Variant& variant, int pid) {
  if (!variant.memory || !variant.memory->oom) return false;
  for (const OomKill& k : variant.memory->oom->killed)
    if (k.pid == pid) return true;
  return false;
}

std::string oom_kill_text(const Variant& variant, int pid) {
  if (!variant.memory || !variant.memory->oom) return "";
  const OomFacts& oom = *variant.memory->oom;
  for (const OomKill& k : oom.killed)
    if (k.pid == pid) {
      // "Memory cgroup out of memory: Killed process 4242 (python3) total-vm:182168kB,
      // anon-rss:160524kB, ...": a cgroup's limit or the machine's, and its size then.
      const std::string& log = k.log;
      const bool cgroup = log.rfind("Memory cgroup out of memory", 0) == 0;
      std::string said =
          "the kernel's OOM killer (" + std::string(cgroup ? "its memory cgroup's limit was reached"
                                                           : "the machine was out of memory");
      if (const auto at = log.find("anon-rss:"); at != std::string::npos)
        said += "; its anonymous resident memory then: " +
                kib_text(std::strtoull(log.c_str() + at + 9, nullptr, 10));
      return said + ", by the kernel's log)";
    }
  if (oom.kernel_log_read) return "";
  std::string rose;
  for (const CgroupOomKills& c : oom.cgroups) {
    if (!c.oom_kill_before || !c.oom_kill_after || *c.oom_kill_after <= *c.oom_kill_before)
      continue;
    const long long n = *c.oom_kill_after - *c.oom_kill_before;
    std::string path = c.cgroup;
    if (path.size() > 3 && path[2] == ':') path = path.substr(3);
    rose += (rose.empty() ? "" : "; ") + std::to_string(n) + " in memory cgroup " + path;
  }
  if (rose.empty()) return "";
  return "perhaps the kernel's OOM killer: it killed processes during the run (" + rose +
         "), but the kernel's log, which names them, could not be read";
}

std::string memory_growth_fact(const Variant& variant) {
  struct Grew {
    int pid;
    std::uint64_t from, to;
  };
  std::vector<Grew> grew;
  if (variant.memory)
    for (const ProcessSamples& p : variant.memory->processes) {
      const std::uint64_t from = kib(p.first.private_kib), to = kib(p.peak.private_kib);
      const std::uint64_t rss = kib(p.first.rss_kib), shared = rss - std::min(rss, from);
      if (shared >= 64 * 1024 && to >= from + 256 * 1024 && to >= 4 * from)
        grew.push_back({p.pid, from, to});
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
