// cow-refcount-growth (pytorch/pytorch#13246): a Dataset holds its samples as a Python list of
// objects; every DataLoader worker that reads one increments its reference count, which lives in
// the object, so the write copies the page the object sits on into that worker (copy-on-write).
// Worker after worker ends up with its own copy of the whole list, until the OOM killer ends one.
//
// Here the list is a std::vector of 100,000 small tensors, each with its TensorImpl (its intrusive
// count) on the heap between the others' memory. A worker reads every sample as a Python loop
// does: takes a handle (count up), reads the 16 values, drops it (count down). It reports its own
// private dirty memory before and after (support/private_memory.h); the parent measured what the
// samples take. The outcome is that measurement: `error` when the workers' mean growth is at
// least half the samples' footprint. The fixes keep the samples where no per-sample count is
// written: one flat tensor, or a shared memory segment the workers map.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <forkcheck/launch.h>
#include "cases/support/private_memory.h"
#include "cases/support/shared_memory.h"
#include "core/case_registry.h"
#include "core/pool.h"
#include "launch/process.h"

namespace {
namespace cow_refcount_growth {

using fc::Outcome;
using nlohmann::json;
namespace memory = fc::cases::private_memory;

constexpr int kWorkers = 4;
constexpr int64_t kSamples = 100000, kValues = 16;
constexpr double kCopiedFraction = 0.5;  // mean growth >= this x the footprint: copied
constexpr std::size_t kSegmentBytes = kSamples * kValues * sizeof(float);

// The dataset as the parent built it; fork workers inherit these.
std::vector<at::Tensor> g_list;  // one small tensor per sample: a Python list of objects
at::Tensor g_flat;               // [kSamples, kValues]: one tensor, one count

void fill_sample(float* p, int64_t i) {
  for (int64_t j = 0; j < kValues; ++j)
    p[j] = static_cast<float>(i % 1000) + 0.25f * static_cast<float>(j);
}

double sum_of(const float* p) {
  double s = 0;
  for (int64_t j = 0; j < kValues; ++j) s += p[j];
  return s;
}

// Every sample read through a handle of its own, as `for x in dataset.samples` takes one.
double read_list(const std::vector<at::Tensor>& list) {
  double sum = 0;
  for (const at::Tensor& sample : list) {
    // NOLINTNEXTLINE(performance-unnecessary-copy-initialization): the copy is the point
    const at::Tensor item = sample;  // the count in the sample's TensorImpl goes up: a write
    sum += sum_of(item.data_ptr<float>());
  }  // and down
  return sum;
}

// Every row of one flat tensor, through a view: the view is this process's own new TensorImpl,
// and the count it bumps is the one storage's.
double read_rows(const at::Tensor& flat) {
  double sum = 0;
  for (int64_t i = 0; i < flat.size(0); ++i) {
    const at::Tensor row = flat[i];
    sum += sum_of(row.data_ptr<float>());
  }
  return sum;
}

json reading_json(const memory::Reading& r) {
  return {{"private_dirty_kib", r.private_dirty_kib},
          {"shared_dirty_kib", r.shared_dirty_kib},
          {"rss_kib", r.rss_kib}};
}

FORKCHECK_WORKER(cow_read_samples) {
  const memory::Reading before = memory::read_self();  // first: fork shares every page so far
  const std::string layout = payload.at("layout").get<std::string>();
  double checksum = 0;
  if (layout == "list") {
    checksum = read_list(g_list);
  } else if (layout == "flat") {
    checksum = read_rows(g_flat);
  } else {  // "segment": mapped by name; a view of it, no copy
    auto seg = fc::SharedSegment::open(payload.at("segment").get<std::string>(), kSegmentBytes);
    checksum = read_rows(torch::from_blob(seg.data(), {kSamples, kValues}));
  }
  const memory::Reading after = memory::read_self();
  return {{"worker", payload.at("worker")},
          {"pid", fc::launch::current_process_id()},
          {"layout", layout},
          {"checksum", checksum},
          {"before", reading_json(before)},
          {"after", reading_json(after)},
          {"private_growth_kib", after.private_dirty_kib - before.private_dirty_kib}};
}

// KiB below a MiB, so that a fix's few pages do not read as 0.0 MiB.
std::string size_text(double kib) {
  char buf[32];
  if (kib >= 1024 || kib <= -1024)
    std::snprintf(buf, sizeof buf, "%.1f MiB", kib / 1024);
  else
    std::snprintf(buf, sizeof buf, "%.0f KiB", kib);
  return buf;
}

std::string percent_text(double fraction) {
  char buf[16];
  std::snprintf(buf, sizeof buf, fraction < 0.01 ? "%.1f%%" : "%.0f%%", 100 * fraction);
  return buf;
}

std::string with_commas(long long n) {
  std::string s = std::to_string(n);
  for (int at = static_cast<int>(s.size()) - 3; at > 0; at -= 3) s.insert(at, ",");
  return s;
}

const char* started(const std::string& method) {
  return method == "fork" ? "forked" : method == "spawn" ? "spawned" : "forkserver";
}

const char* layout_words(const std::string& layout) {
  return layout == "list"   ? "one small tensor each, in a std::vector"
         : layout == "flat" ? "one flat tensor"
                            : "one flat tensor in a shared memory segment";
}

// Distinct pages holding the samples' counts (their TensorImpls): what reading can copy.
long long pages_holding_counts(const std::vector<at::Tensor>& list) {
  const long page = memory::page_bytes();
  if (page <= 0) return -1;  // unknown (the case runs only where it is known)
  std::unordered_set<std::uintptr_t> pages;
  for (const auto& t : list)
    pages.insert(reinterpret_cast<std::uintptr_t>(t.unsafeGetTensorImpl()) /
                 static_cast<std::uintptr_t>(page));
  return static_cast<long long>(pages.size());
}

// The samples in the variant's layout; the parent's own private growth across it, in details.
void build(const std::string& layout, float* segment, json& details) {
  const auto t0 = std::chrono::steady_clock::now();
  if (layout == "list") {
    g_list.reserve(kSamples);
    for (int64_t i = 0; i < kSamples; ++i) {
      g_list.push_back(torch::empty({kValues}));
      fill_sample(g_list.back().data_ptr<float>(), i);
    }
    details["pages_holding_reference_counts"] = pages_holding_counts(g_list);
  } else {
    float* p = segment;
    if (layout == "flat") {
      g_flat = torch::empty({kSamples, kValues});
      p = g_flat.data_ptr<float>();
    }
    for (int64_t i = 0; i < kSamples; ++i) fill_sample(p + i * kValues, i);
    details["pages_holding_reference_counts"] = 1;  // the one storage's
  }
  details["build_seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The rule, on what the workers measured.
fc::CaseResult judge(fc::PoolResult pool, json details, const std::string& method) {
  if (pool.outcome != Outcome::kOk) return fc::to_case_result(std::move(pool), details);
  const double footprint = details.at("samples_footprint_kib").get<double>();
  const double expected_sum = details.at("parent_checksum").get<double>();
  std::vector<long long> growth;
  json figures = json::array();
  for (const auto& w : pool.workers) {
    const json& r = w.at("result");
    growth.push_back(r.at("private_growth_kib").get<long long>());
    figures.push_back({{"worker", r.at("worker")},
                       {"pid", r.at("pid")},
                       {"private_dirty_kib_before", r.at("before").at("private_dirty_kib")},
                       {"private_dirty_kib_after", r.at("after").at("private_dirty_kib")},
                       {"growth_kib", growth.back()}});
    if (r.at("checksum").get<double>() != expected_sum) {
      pool.outcome = Outcome::kError;
      pool.message = "worker " + r.at("worker").dump() + " read other values than the parent " +
                     "built (checksum " + r.at("checksum").dump() + ", the parent's " +
                     details.at("parent_checksum").dump() + ")";
    }
  }
  double mean = 0;
  for (long long g : growth) mean += static_cast<double>(g);
  mean /= static_cast<double>(growth.size());
  const auto [low, high] = std::minmax_element(growth.begin(), growth.end());
  const double threshold = kCopiedFraction * footprint;
  details["workers_private_memory"] = figures;
  details["mean_growth_kib"] = mean;
  details["rule"] = {{"error_when", "mean worker growth >= 0.5 x the samples' footprint"},
                     {"fraction", kCopiedFraction},
                     {"threshold_kib", threshold}};
  details["growth_fraction_of_footprint"] = footprint > 0 ? mean / footprint : 0.0;
  if (pool.outcome != Outcome::kOk) return fc::to_case_result(std::move(pool), details);
  if (footprint <= 0) {
    pool.outcome = Outcome::kError;
    pool.message = "the parent's private memory did not grow building the samples (" +
                   size_text(footprint) + "): no footprint to compare the workers' growth with";
    return fc::to_case_result(std::move(pool), details);
  }
  const std::string layout = details.at("plan").at("layout").get<std::string>();
  pool.message = "the " + std::to_string(growth.size()) + " " + started(method) +
                 " workers' private memory grew by " + size_text(mean) + " each on average (min " +
                 size_text(static_cast<double>(*low)) + ", max " +
                 size_text(static_cast<double>(*high)) + ") reading " + with_commas(kSamples) +
                 " samples that take " + size_text(footprint) + " in the parent (" +
                 layout_words(layout) + "): " + percent_text(mean / footprint) +
                 " of the samples' footprint";
  if (mean >= threshold) {
    pool.outcome = Outcome::kError;
    if (layout == "list") {
      const long long pages = details.at("pages_holding_reference_counts").get<long long>();
      pool.message += " (their reference counts lie on " + with_commas(pages) + " pages, " +
                      size_text(static_cast<double>(pages * memory::page_bytes()) / 1024) + ")";
    }
    pool.message += ", so their pages were copied into each worker";
  } else {
    pool.message += ", under the 50% at which a worker counts as having copied them";
  }
  return fc::to_case_result(std::move(pool), details);
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  const std::string layout = variant.name == "fork"               ? "list"
                             : variant.name == "fork-flat-tensor" ? "flat"
                                                                  : "segment";
  json details;
  details["plan"] = {{"workers", kWorkers},
                     {"samples", kSamples},
                     {"values_per_sample", kValues},
                     {"layout", layout}};
  // The segment is made before the first reading, so that only its pages count as the samples'.
  std::optional<fc::SharedSegment> seg;
  if (layout == "segment") {
    seg.emplace(fc::SharedSegment::create("cow", kSegmentBytes));  // unlinked on every path
    fc::cases::remove_segment_on_termination(seg->name());         // SIGTERM runs no destructor
    details["shm_segment"] = seg->name();
  }
  const memory::Reading start = memory::read_self();
  build(layout, seg ? static_cast<float*>(seg->data()) : nullptr, details);
  const memory::Reading built = memory::read_self();
  details["parent_before_build"] = reading_json(start);
  details["parent_after_build"] = reading_json(built);
  details["samples_footprint_kib"] = built.private_dirty_kib - start.private_dirty_kib;
  // What every worker must read back: the same sum, added in the same order.
  if (layout == "list")
    details["parent_checksum"] = read_list(g_list);
  else
    details["parent_checksum"] =
        read_rows(layout == "flat" ? g_flat : torch::from_blob(seg->data(), {kSamples, kValues}));

  std::vector<json> payloads;
  for (int i = 0; i < kWorkers; ++i)
    payloads.push_back({{"worker", i}, {"layout", layout}, {"segment", seg ? seg->name() : ""}});
  // The parent writes none of the samples' pages until every worker has ended: a page it copied
  // would count as the last sharer's private one. The segment stays mapped here for the same
  // reason (a page mapped by one process alone counts as its private).
  auto workers = fc::start_pool(variant, "cow_read_samples", payloads);
  auto result = judge(fc::join_pool(workers, std::chrono::seconds(60)), std::move(details),
                      variant.start_method);
  g_list.clear();
  g_flat.reset();
  if (seg) {
    const std::string name = seg->name();
    seg.reset();  // unlinks the name
    result.details["shm_exists_after"] = fc::cases::shm_exists(name);
  }
  return result;
}

std::vector<fc::VariantSpec> variants() {
  std::vector<fc::VariantSpec> v = {
      fc::hazard("fork", "fork", Outcome::kError,
                 "taking a handle to a sample increments the count in its TensorImpl, a write to "
                 "the page it lies on (as Py_INCREF writes a Python object's header); fork shares "
                 "the parent's pages copy-on-write, so the first such write in a worker copies "
                 "the page, and the samples' objects lie on every page the list takes",
                 "the parent builds 100,000 samples of 16 floats, each its own tensor, in a "
                 "std::vector; 4 fork workers each read every sample through a handle of its "
                 "own"),
      fc::fix("fork-flat-tensor", "fork",
              "one TensorImpl and one storage hold every sample: a worker's row views are its "
              "own new objects and bump one storage's count (one page); the rows' floats are "
              "read, never written, so they stay shared (the thread's fix: numpy arrays or one "
              "tensor instead of a list of objects)",
              "the same samples as rows of one [100000, 16] tensor; 4 fork workers read each "
              "row through a view"),
      fc::fix("spawn-shared-memory", "spawn",
              "the parent wrote the samples once into a named shared memory segment; a spawned "
              "worker maps it by name and torch::from_blob views it without a copy: reading a "
              "shared mapping adds shared pages, no private one, and nothing was inherited to "
              "copy",
              "the samples as one flat tensor in a shared memory segment; 4 spawned workers "
              "open it by name and read every row"),
      fc::fix("forkserver-shared-memory", "forkserver",
              "as `spawn-shared-memory`: the server was forked before the samples existed, its "
              "workers map the segment by name and read it shared",
              "as `spawn-shared-memory`, the workers forked by the forkserver"),
  };
  return fc::skip_all(std::move(v), memory::unavailable_reason());
}

FORKCHECK_CASE(cow_refcount_growth_case) {
  fc::CaseDef c;
  c.id = "cow-refcount-growth";
  c.title = "Reading a list of objects copies its pages into every forked worker";
  c.source_title =
      "DataLoader num_workers > 0 causes CPU memory from parent process to be replicated in all "
      "worker processes";
  c.source_author = "reporters on pytorch/pytorch#13246";
  c.source_doc = "";
  c.source_url = "https://github.com/pytorch/pytorch/issues/13246";
  c.reported =
      "A Dataset holding its samples in a Python list (of strings, dicts, tensors): with "
      "num_workers > 0 each worker's memory grows as it reads, as if it held a copy of the "
      "parent's, until the OOM killer ends one (\"DataLoader worker (pid N) is killed by "
      "signal: Killed.\"). The fixes in the thread: keep the samples in numpy arrays or one "
      "tensor, which carry one reference count for all of them, or share them explicitly.";
  c.mechanism =
      "fork shares the parent's pages copy-on-write: the first write to one in a worker copies "
      "the whole page into it. Reading an object takes a reference, and the reference count "
      "lives in the object (CPython's ob_refcnt; libtorch's intrusive count in a TensorImpl), "
      "so a read is a write. Objects spread over the heap put a count on every page, and a "
      "worker that reads them all copies them all. A flat array or one tensor has one count; "
      "a shared mapping is never copied.";
  c.platforms =
      "Linux, where the case reads each worker's private memory (fork: every POSIX system)";
  c.variants = &variants;
  c.run = &run;
  // No message of its own to explain: "killed by signal: Killed" says SIGKILL, not who sent it
  // (exec tells an OOM kill from the cgroup's counters, reports/memory_text.h).
  // What in the environment may explain a change of its outcome (forkcheck diff): the heap's
  // layout (libc's malloc, libtorch's allocator) puts the counts on the pages, the kernel copies
  // them.
  c.environment_topics = {"libc", "libtorch", "kernel", "os", "start-methods"};
  return c;
}

}  // namespace cow_refcount_growth
}  // namespace
