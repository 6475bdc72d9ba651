// The shared vocabulary of forkcheck's results: what a variant's run came to, and what a variant
// is for. Header-only so that the harness (no torch) and the repro programs agree on the words.
#pragma once

#include <optional>
#include <string_view>

namespace fc {

// ok: ran as it should. error: the documented exception, or a non-zero exit with a message.
// crash: killed by a signal it did not ask for. hang: the whole process tree was blocked (no
// CPU to speak of, no output, no process coming or going) through the stall window, and was
// ended. timeout: the deadline passed while the tree was still working, and it was ended.
// protocol-error: the child sent something on its channel that is not a forkcheck message.
// skip: not run here, with the reason.
enum class Outcome { kOk, kError, kCrash, kHang, kTimeout, kProtocolError, kSkip };

inline const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kError:
      return "error";
    case Outcome::kCrash:
      return "crash";
    case Outcome::kHang:
      return "hang";
    case Outcome::kTimeout:
      return "timeout";
    case Outcome::kProtocolError:
      return "protocol-error";
    case Outcome::kSkip:
      return "skip";
  }
  return "?";
}

inline std::optional<Outcome> parse_outcome(std::string_view s) {
  for (Outcome o : {Outcome::kOk, Outcome::kError, Outcome::kCrash, Outcome::kHang,
                    Outcome::kTimeout, Outcome::kProtocolError, Outcome::kSkip})
    if (s == to_string(o)) return o;
  return std::nullopt;
}

// A hazard variant shows the documented failure (or says why it does not bite here); a fix
// variant shows the fixed behaviour and must be `ok` wherever it runs.
enum class Role { kHazard, kFix };

inline const char* to_string(Role r) { return r == Role::kHazard ? "hazard" : "fix"; }

}  // namespace fc
