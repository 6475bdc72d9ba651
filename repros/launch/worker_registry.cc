// Name -> function table filled by FORKCHECK_WORKER at static-initialisation time, so every
// process image (parent, fork child, spawned exec, forkserver) has the same table before main().
#include <cstdio>
#include <map>
#include <string>

#include <forkcheck/launch.h>

namespace fc::launch {
namespace {

std::map<std::string, WorkerFn>& registry() {
  // Function-local so registration from any translation unit's static initialiser finds it
  // constructed; never destroyed, so lookups from late static destructors stay valid.
  static auto* table = new std::map<std::string, WorkerFn>();
  return *table;
}

}  // namespace

bool register_worker(const char* name, WorkerFn fn) {
  auto [it, inserted] = registry().emplace(name, fn);
  if (!inserted && it->second != fn) {
    // Static initialisers cannot usefully throw; the first registration wins.
    std::fprintf(stderr, "forkcheck: worker '%s' registered twice; keeping the first\n", name);
  }
  return inserted;
}

WorkerFn find_worker(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second;
}

}  // namespace fc::launch
