// Whose torch (reports/whose_torch.h) on made-up records: the catalog's libtorch as the
// environment records it, and the sentence that compares a Python torch with it, one row per case
// of the comparison.
#include <string>

#include <gtest/gtest.h>

#include "reports/model/report_model_json.h"
#include "reports/whose_torch.h"

namespace fc::reports {
namespace {

using json = nlohmann::json;

const char* kDebianLib = "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13.0";

json environment() {
  return {{"libtorch", {{"version", "1.13.0"}}},
          {"libraries",
           {{{"family", "libc"}, {"real_path", "/usr/lib/libc.so.6"}},
            {{"family", "libtorch"}, {"real_path", "/usr/lib/x86_64-linux-gnu/libc10.so.1.13.0"}},
            {{"family", "libtorch"}, {"real_path", kDebianLib}}}}};
}

std::optional<CatalogLibtorch> catalog_of(const json& env) {
  return catalog_libtorch(read_as<Environment>(env));
}

TEST(WhoseTorch, TheCatalogsLibtorchIsTheFileItsProgramMapped) {
  const auto t = catalog_of(environment());
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->version, "1.13.0");
  EXPECT_EQ(t->library, kDebianLib);
  EXPECT_EQ(libtorch_text(*t), std::string("1.13.0 (") + kDebianLib + ")");
  json env = environment();
  env.erase("libraries");
  EXPECT_EQ(catalog_of(env)->library, "");
  EXPECT_FALSE(catalog_of(json::object()).has_value()) << "no torch program collected it";
}

TEST(WhoseTorch, APythonTorchIsTheSameLibtorchOnlyByItsFileOrItsRelease) {
  const auto lib = catalog_of(environment());
  const json found = {{"status", "found"},
                      {"interpreter", "/usr/bin/python3"},
                      {"package_dir", "/usr/lib/python3/dist-packages/torch"},
                      {"version", "1.13.0a0"},
                      {"cuda", nullptr}};
  const struct {
    const char* name;
    json python;
    const char* says;
    bool points_to_matrix;
  } rows[] = {
      {"same file",
       [&] {
         json p = found;
         p["libtorch_cpu"] = kDebianLib;
         return p;
       }(),
       "the libtorch the catalog ran against (the same libtorch_cpu file)", false},
      {"another file",
       [&] {
         json p = found;
         p["version"] = "2.3.0+cu121";
         p["cuda"] = "12.1";
         p["libtorch_cpu"] = "/venv/torch/lib/libtorch_cpu.so";
         return p;
       }(),
       "imports torch 2.3.0+cu121 (CUDA 12.1) from /usr/lib/python3/dist-packages/torch: another "
       "libtorch than the catalog's",
       true},
      {"same release, no file to compare", found, "(by version alone", false},
      {"another release, no file",
       [&] {
         json p = found;
         p["version"] = "2.1.0";
         return p;
       }(),
       "another libtorch", true},
      {"no torch",
       {{"status", "no-torch"}, {"interpreter", "/usr/bin/python3"}},
       "has no torch module",
       false},
      {"no python",
       {{"status", "no-python"}, {"error", "no python3 in PATH"}},
       "no python3 in PATH: no Python torch to compare",
       false},
  };
  for (const auto& row : rows) {
    const std::string s = python_torch_sentence(lib, read_as<EnvPythonTorch>(row.python));
    EXPECT_NE(s.find(row.says), std::string::npos) << row.name << ": " << s;
    EXPECT_EQ(s.find("forkcheck matrix") != std::string::npos, row.points_to_matrix)
        << row.name << ": " << s;
    EXPECT_EQ(s.find("FORKCHECK_TORCH_FROM_PYTHON") != std::string::npos, row.points_to_matrix)
        << row.name << ": " << s;
  }
  EXPECT_EQ(python_torch_sentence(lib, std::nullopt), "");
  EXPECT_NE(
      python_torch_sentence(std::nullopt, read_as<EnvPythonTorch>(found)).find("no torch program"),
      std::string::npos);
}

}  // namespace
}  // namespace fc::reports
