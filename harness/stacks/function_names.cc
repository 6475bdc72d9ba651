// Function names as debuggers print them, reduced to the name: gdb appends the
// arguments' values ("f (x=1, y=...)"), eu-stack the demangled parameter types
// ("f(int, char const*)").
#include "harness/stacks/stacks.h"

namespace fc::harness {

std::string function_name_only(const std::string& s) {
  static const std::string kAnon = "(anonymous namespace)";
  static const std::string kCall = "operator()";
  int angle = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (s.compare(i, kAnon.size(), kAnon) == 0) {
      i += kAnon.size() - 1;
    } else if (s.compare(i, kCall.size(), kCall) == 0) {
      i += kCall.size() - 1;
    } else if (c == '<') {
      ++angle;
    } else if (c == '>' && angle > 0) {
      --angle;
    } else if (c == '(' && angle == 0) {
      size_t end = i;
      while (end > 0 && s[end - 1] == ' ') --end;
      return s.substr(0, end);
    }
  }
  return s;
}

}  // namespace fc::harness
