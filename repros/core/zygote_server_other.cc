// The zygote relies on Linux's child subreaper (to re-parent each command to the harness) and
// /proc; elsewhere the harness execs every variant and never asks for one.
#include <cstdio>

#include "core/zygote_server.h"

namespace fc {

int serve_zygote(const char* argv0, const std::function<int(const std::vector<std::string>&)>&) {
  std::fprintf(stderr, "%s: --zygote is only supported on Linux\n", argv0);
  return 2;
}

}  // namespace fc
