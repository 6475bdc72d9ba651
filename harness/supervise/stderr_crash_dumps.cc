#include "harness/supervise/stderr_crash_dumps.h"

#include <csignal>
#include <cstdint>
#include <vector>

#include "harness/stacks/stacks.h"

namespace fc::harness {
namespace {

using json = nlohmann::json;

// The signal faulthandler names in its first line, as Python's negative return codes give it.
int signal_of(const std::string& fatal) {
  if (fatal == "Segmentation fault") return SIGSEGV;
  if (fatal == "Floating point exception") return SIGFPE;
  if (fatal == "Aborted") return SIGABRT;
  if (fatal == "Illegal instruction") return SIGILL;
#ifdef SIGBUS
  if (fatal == "Bus error") return SIGBUS;
#endif
  return 0;
}

bool had_thread(const json& process, std::uint64_t ident) {
  const auto matches = [&](const json& t) {
    return t.is_object() && t.contains("ident") && t["ident"].is_number_unsigned() &&
           t["ident"].get<std::uint64_t>() == ident;
  };
  if (process.contains("main_thread") && matches(process["main_thread"])) return true;
  if (process.contains("threads") && process["threads"].is_array())
    for (const auto& t : process["threads"])
      if (matches(t)) return true;
  return false;
}

// How pid's parent saw it end, where one did: its return code, else 0.
int returncode_of(const json& processes, const json& pid) {
  for (const auto& p : processes)
    if (p.contains("child_exits") && p["child_exits"].is_array())
      for (const auto& c : p["child_exits"])
        if (c.value("pid", json()) == pid && c.contains("returncode") &&
            c["returncode"].is_number_integer())
          return c["returncode"].get<int>();
  return 0;
}

}  // namespace

void adopt_crash_dumps_from_stderr(json& python, const std::string& stderr_text) {
  if (!python.is_object() || !python.contains("processes") || !python["processes"].is_array())
    return;
  json& processes = python["processes"];
  const std::string marker = "Fatal Python error: ";
  for (size_t at = stderr_text.find(marker); at != std::string::npos;
       at = stderr_text.find(marker, at + marker.size())) {
    const size_t next = stderr_text.find(marker, at + marker.size());
    const PyDump dump = parse_faulthandler_dump(
        stderr_text.substr(at, next == std::string::npos ? std::string::npos : next - at));
    const PyDumpThread* current = nullptr;
    for (const auto& t : dump.threads)
      if (t.current) current = &t;
    if (dump.fatal.empty() || !current || current->ident == 0 || current->frames.empty()) continue;
    const int signal = signal_of(dump.fatal);
    json* only = nullptr;
    int candidates = 0;
    for (auto& p : processes) {
      if (!p.is_object() || p.contains("crash") || !p.value("exit", json()).is_null() ||
          !had_thread(p, current->ident))
        continue;
      const int code = returncode_of(processes, p.value("pid", json()));
      if (code != 0 && (signal == 0 || code != -signal)) continue;
      ++candidates;
      only = &p;
    }
    if (candidates != 1) continue;
    json crash = {{"fatal", dump.fatal},
                  {"dumped_by", "the program's own faulthandler"},
                  {"written_to", "stderr"},
                  {"threads", json::array()}};
    for (const auto& t : dump.threads) {
      json frames = json::array();
      for (const auto& f : t.frames)
        frames.push_back({{"file", f.file}, {"line", f.line}, {"function", f.function}});
      crash["threads"].push_back({{"ident", t.ident}, {"current", t.current}, {"frames", frames}});
    }
    (*only)["crash"] = std::move(crash);
  }
}

}  // namespace fc::harness
