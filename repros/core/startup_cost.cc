#include "core/startup_cost.h"

#include "core/libraries.h"

namespace fc {
namespace {

std::size_t g_libraries = 0;
bool g_noted = false;

}  // namespace

void note_startup_cost() {
  if (g_noted) return;
  g_noted = true;
  g_libraries = libraries::loaded().size();
}

std::size_t startup_libraries() { return g_libraries; }

}  // namespace fc
