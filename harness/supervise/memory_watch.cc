#include "harness/supervise/memory_watch.h"

#include <algorithm>
#include <set>

namespace fc::harness {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// A sample's reading of a large tree stops after this long; the next goes on from there.
constexpr auto kSampleBudget = std::chrono::milliseconds(50);
// Said live once: a process that shared at least kSharedKib with others when first sampled
// (a fork's child shares its parent's pages) and whose private memory has since grown by
// kGrowthKib and to kFactor times what it was.
constexpr std::uint64_t kSharedKib = 64 * 1024, kGrowthKib = 256 * 1024, kFactor = 4;
// Processes kept in the record: the largest at their peak (and every OOM victim).
constexpr std::size_t kRecorded = 500;

json sample_json(const MemorySample& s) {
  return {{"at_s", s.at_s},
          {"rss_kib", s.rss_kib},
          {"pss_kib", s.pss_kib},
          {"private_kib", s.private_kib}};
}

std::uint64_t median(std::vector<std::uint64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

struct MemoryWatch::Oom {
  KernelLog log;
  long long system_before = system_oom_kills();
  std::map<std::string, long long> cgroups_before;  // each memory cgroup the tree was seen in
  std::vector<std::pair<int, std::string>> killed;
};

MemoryWatch::MemoryWatch(Clock::time_point started)
    : started_(started), oom_(std::make_unique<Oom>()) {}

MemoryWatch::~MemoryWatch() = default;

std::optional<MemoryGrowth> MemoryWatch::sample(const launch::TreeLook& look,
                                                Clock::time_point now) {
  if (last_sample_ != Clock::time_point{} && now - last_sample_ < kEvery) return std::nullopt;
  last_sample_ = now;
  const double at_s = std::chrono::duration<double>(now - started_).count();
  std::vector<const launch::TreeLook::Process*> live;
  for (const auto& [pid, p] : look.processes)
    if (!p.facts.zombie()) live.push_back(&p);
  if (live.empty()) return std::nullopt;
  const auto stop = Clock::now() + kSampleBudget;
  MemoryGrowth growth;
  std::vector<std::uint64_t> from, to;
  for (std::size_t n = 0; n < live.size() && Clock::now() < stop; ++n) {
    const auto& f = live[(turn_ + n) % live.size()]->facts;
    MemorySample s;
    if (!read_memory(f.pid, s)) continue;
    s.at_s = at_s;
    ProcessMemory& m = processes_[{f.pid, f.start_time}];
    if (m.samples == 0) {
      m.pid = f.pid;
      m.ppid = f.ppid;
      m.start_time = f.start_time;
      m.name = f.name;
      m.first = m.peak = s;
      const std::string cgroup = memory_cgroup_of(f.pid);
      if (!cgroup.empty() && !oom_->cgroups_before.count(cgroup))
        oom_->cgroups_before[cgroup] = cgroup_oom_kills(cgroup);
    }
    ++m.samples;
    m.last = s;
    if (s.private_kib > m.peak.private_kib) m.peak = s;
    const std::uint64_t shared = m.first.rss_kib - std::min(m.first.rss_kib, m.first.private_kib);
    if (!m.grew_told && shared >= kSharedKib && s.private_kib >= m.first.private_kib + kGrowthKib &&
        s.private_kib >= kFactor * m.first.private_kib) {
      m.grew_told = true;
      growth.pids.push_back(m.pid);
      from.push_back(m.first.private_kib);
      to.push_back(s.private_kib);
    }
  }
  turn_ = (turn_ + 1) % std::max<std::size_t>(live.size(), 1);
  // A run of many short-lived processes keeps a bounded record: of those that ended, the largest.
  if (processes_.size() > 4 * kRecorded) {
    std::vector<std::pair<std::uint64_t, std::pair<int, std::uint64_t>>> ended;
    for (const auto& [key, m] : processes_)
      if (!look.processes.count(key.first)) ended.push_back({m.peak.private_kib, key});
    std::sort(ended.begin(), ended.end());
    for (std::size_t i = 0; i < ended.size() && processes_.size() > 2 * kRecorded; ++i)
      processes_.erase(ended[i].second);
  }
  if (growth.pids.empty()) return std::nullopt;
  growth.from_kib = median(from);
  growth.to_kib = median(to);
  return growth;
}

json MemoryWatch::record() {
  for (auto& k : oom_->log.oom_kills()) oom_->killed.push_back(std::move(k));
  std::set<int> victims;
  for (const auto& [pid, line] : oom_->killed) victims.insert(pid);
  std::vector<const ProcessMemory*> kept;
  for (const auto& [key, m] : processes_) kept.push_back(&m);
  std::stable_sort(kept.begin(), kept.end(), [&](const ProcessMemory* a, const ProcessMemory* b) {
    const bool va = victims.count(a->pid) > 0, vb = victims.count(b->pid) > 0;
    if (va != vb) return va;
    return a->peak.private_kib > b->peak.private_kib;
  });
  json processes = json::array();
  for (std::size_t i = 0; i < kept.size() && i < kRecorded; ++i) {
    const ProcessMemory& m = *kept[i];
    processes.push_back({{"pid", m.pid},
                         {"ppid", m.ppid},
                         {"name", m.name},
                         {"samples", m.samples},
                         {"first", sample_json(m.first)},
                         {"peak", sample_json(m.peak)},
                         {"last", sample_json(m.last)}});
  }
  json killed = json::array();
  for (const auto& [pid, line] : oom_->killed) killed.push_back({{"pid", pid}, {"log", line}});
  json cgroups = json::array();
  for (const auto& [path, before] : oom_->cgroups_before)
    cgroups.push_back({{"cgroup", path},
                       {"oom_kill_before", before >= 0 ? json(before) : json(nullptr)},
                       {"oom_kill_after", before >= 0 ? json(cgroup_oom_kills(path)) : json()}});
  const long long system_after = system_oom_kills();
  return {{"every_s", std::chrono::duration<double>(kEvery).count()},
          {"processes", std::move(processes)},
          {"processes_sampled", processes_.size()},
          {"oom",
           {{"kernel_log_read", oom_->log.readable()},
            {"killed", std::move(killed)},
            {"cgroups", std::move(cgroups)},
            {"system_oom_kill_before",
             oom_->system_before >= 0 ? json(oom_->system_before) : json(nullptr)},
            {"system_oom_kill_after", system_after >= 0 ? json(system_after) : json(nullptr)}}}};
}

}  // namespace fc::harness
