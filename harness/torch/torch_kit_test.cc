// The torch kit's cache (harness/torch/torch_kit.h): a build belongs to one torch, and another
// torch, another forkcheck or another kit is another folder; where builds are kept.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "harness/torch/torch_kit.h"

namespace fc::harness {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

TEST(TorchKit, ABuildsFolderIsNamedAfterItsTorchAndEverythingItWasBuiltFrom) {
  const fs::path dir = fs::temp_directory_path() / ("torch-kit-test-" + std::to_string(getpid()));
  fs::create_directories(dir / "torch" / "lib");
  std::ofstream(dir / "torch" / "lib" / "libtorch_cpu.so") << "one";
  const json torch = {{"package_dir", (dir / "torch").string()},
                      {"version", "2.3.0+cu121"},
                      {"libtorch_cpu", (dir / "torch" / "lib" / "libtorch_cpu.so").string()}};
  const std::string key = torch_build_key(torch, "/kit", "{}");
  EXPECT_EQ(key.rfind("torch-2.3.0+cu121-", 0), 0u) << key;
  EXPECT_EQ(key.size(), std::string("torch-2.3.0+cu121-").size() + 16) << key;
  EXPECT_EQ(torch_build_key(torch, "/kit", "{}"), key) << "the same torch, the same folder";
  json from_venv = torch;
  from_venv["interpreter"] = "/venv/bin/python3";
  EXPECT_EQ(torch_build_key(from_venv, "/kit", "{}"), key) << "found by another interpreter";
  EXPECT_NE(torch_build_key(torch, "/another-kit", "{}"), key);
  EXPECT_NE(torch_build_key(torch, "/kit", "{\"cases\": []}"), key);
  json other = torch;
  other["version"] = "2.4.0";
  EXPECT_NE(torch_build_key(other, "/kit", "{}"), key);
  // The same files installed afresh (pip gives them the time of the install): the same build.
  fs::last_write_time(
      dir / "torch" / "lib" / "libtorch_cpu.so",
      fs::last_write_time(dir / "torch" / "lib" / "libtorch_cpu.so") + std::chrono::hours(24));
  EXPECT_EQ(torch_build_key(torch, "/kit", "{}"), key);
  // Another build of the same version in its place: its library is another file.
  std::ofstream(dir / "torch" / "lib" / "libtorch_cpu.so") << "another build";
  EXPECT_NE(torch_build_key(torch, "/kit", "{}"), key);
  // A version with characters no folder name should hold.
  EXPECT_EQ(torch_build_key({{"version", "1.0 / x"}}, "/kit", "{}").rfind("torch-1.0___x-", 0), 0u);
  fs::remove_all(dir);
}

TEST(TorchKit, BuildsAreKeptInTheUsersCache) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved = xdg ? xdg : "";
  setenv("XDG_CACHE_HOME", "/somewhere", 1);
  EXPECT_EQ(torch_builds_folder(), fs::path("/somewhere/forkcheck/torch-cases"));
  unsetenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (home && *home) {
    EXPECT_EQ(torch_builds_folder(), fs::path(home) / ".cache" / "forkcheck" / "torch-cases");
  }
  if (!saved.empty()) setenv("XDG_CACHE_HOME", saved.c_str(), 1);
}

}  // namespace
}  // namespace fc::harness
