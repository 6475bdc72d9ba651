// A Python process's crash dump that went to the program's stderr, not to forkcheck: the program
// (pytest's faulthandler plugin, by default) armed faulthandler with a file of its own, which
// replaced the bootstrap's. The dump names no pid; it is adopted by a process only where exactly
// one process of the tree could have written it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fc::harness {

// For each "Fatal Python error" dump in `stderr_text`, the one Python process of `python` (the
// channel's facts) without a crash record or an exit of its own that had a thread of the dump's
// current thread's ident and, where its parent learnt its end, died of the signal the dump names:
// that process gets the dump as its `crash` (dumped_by: "the program's own faulthandler",
// written_to: "stderr"). A dump two processes could have written is left unadopted.
void adopt_crash_dumps_from_stderr(nlohmann::json& python, const std::string& stderr_text);

}  // namespace fc::harness
