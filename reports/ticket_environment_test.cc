// The environment's risk rules (reports/ticket_environment.h) on facts made up for each: which
// measured fact calls for which note, and none where nothing does. No process is started.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reports/model/report_model_json.h"
#include "reports/ticket_environment.h"

namespace {

using nlohmann::json;

json risks_of(const json& env) {
  return fc::reports::environment_risks(fc::reports::read_as<fc::reports::Environment>(env));
}

std::string why_of(const json& risk) {
  return fc::reports::risk_why(fc::reports::read_as<fc::reports::EnvRisk>(risk));
}

std::vector<std::string> risk_ids(const json& env) {
  std::vector<std::string> ids;
  for (const auto& r : risks_of(env)) {
    EXPECT_FALSE(r.value("note", "").empty()) << r;
    EXPECT_FALSE(r.value("why", "").empty()) << r;
    EXPECT_EQ(r.value("why", "").find('\n'), std::string::npos) << "one line: " << r;
    ids.push_back(r.value("id", ""));
  }
  return ids;
}

bool has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// A roomy machine: nothing to note.
json roomy() {
  return {{"machine",
           {{"os", "Linux"},
            {"dev_shm",
             {{"path", "/dev/shm"}, {"size_bytes", 16ull << 30}, {"free_bytes", 15ull << 30}}},
            {"open_files", {{"soft", 65536}, {"hard", 65536}}},
            {"cpus", {{"online", 8}, {"affinity", 8}, {"cgroup_quota", nullptr}}},
            {"variables", json::object()}}},
          {"python",
           {{"status", "ok"},
            {"multiprocessing", {{"default_start_method", "spawn"}}},
            {"torch",
             {{"version", "2.3.0"},
              {"threads", {{"intra_op", 8}, {"inter_op", 8}}},
              {"parallel_backend", "OpenMP"},
              {"openmp_runtimes", {"libgomp.so.1"}},
              {"sharing_strategy", "file_descriptor"},
              {"cuda", {{"available", false}}}}}}}};
}

TEST(EnvRisks, NoneWhenNothingCallsForOne) {
  EXPECT_TRUE(risk_ids(roomy()).empty());
  // Nothing measured, nothing said.
  EXPECT_TRUE(risk_ids(json::object()).empty());
  EXPECT_TRUE(risk_ids(json{{"python", {{"status", "no-python"}}}}).empty());
}

TEST(EnvRisks, DockersDefaultShmIsTooSmall) {
  json env = roomy();
  env["machine"]["dev_shm"] = {
      {"path", "/dev/shm"}, {"size_bytes", 64ull << 20}, {"free_bytes", 64ull << 20}};
  EXPECT_EQ(risk_ids(env), std::vector<std::string>{"dev-shm-small"});
  EXPECT_NE(risks_of(env)[0]["note"].get<std::string>().find("64 MiB"), std::string::npos);
  env["machine"]["dev_shm"]["size_bytes"] = fc::reports::kSmallShmBytes;
  env["machine"]["dev_shm"]["free_bytes"] = fc::reports::kSmallShmBytes / 4;
  EXPECT_EQ(risk_ids(env), std::vector<std::string>{"dev-shm-full"});
  env["machine"]["dev_shm"] = {{"path", "/dev/shm"}, {"absent", "No such file or directory"}};
  EXPECT_EQ(risk_ids(env), std::vector<std::string>{"dev-shm-absent"});
  env["machine"]["os"] = "Darwin";  // macOS has no /dev/shm, and torch needs none there
  EXPECT_TRUE(risk_ids(env).empty());
}

TEST(EnvRisks, LowOpenFilesLimit) {
  json env = roomy();
  env["machine"]["open_files"]["soft"] = 1024;
  EXPECT_EQ(risk_ids(env), std::vector<std::string>{"open-files-low"});
  env["machine"]["open_files"]["soft"] = fc::reports::kLowOpenFiles;
  EXPECT_TRUE(risk_ids(env).empty());
  // With the file_system strategy measured, torch holds no descriptor per tensor.
  env["machine"]["open_files"]["soft"] = 1024;
  env["python"]["torch"]["sharing_strategy"] = "file_system";
  EXPECT_TRUE(risk_ids(env).empty());
}

TEST(EnvRisks, ThreadsOverTheCpusInTheAffinityMask) {
  json env = roomy();
  env["machine"]["cpus"]["affinity"] = 2;
  env["machine"]["variables"]["OMP_NUM_THREADS"] = "64";
  env["python"]["torch"]["threads"]["intra_op"] = 64;
  const auto risks = risks_of(env);
  ASSERT_EQ(risk_ids(env), std::vector<std::string>{"threads-over-cpus"});
  const std::string note = risks[0]["note"].get<std::string>();
  EXPECT_NE(note.find("OMP_NUM_THREADS=64"), std::string::npos) << note;
  EXPECT_NE(note.find("2 CPUs in the affinity mask"), std::string::npos) << note;
  // A nested list counts by its first level; as many threads as CPUs is fine.
  env = roomy();
  env["machine"]["variables"]["OMP_NUM_THREADS"] = "8,2";
  EXPECT_TRUE(risk_ids(env).empty());
  env["machine"]["variables"]["MKL_NUM_THREADS"] = "9";
  EXPECT_EQ(risk_ids(env), std::vector<std::string>{"threads-over-cpus"});
}

TEST(EnvRisks, ThreadsOverTheCgroupQuota) {
  json env = roomy();
  env["machine"]["cpus"]["cgroup_quota"] = 1.5;
  EXPECT_EQ(risk_ids(env), std::vector<std::string>{"threads-over-quota"});
  env["python"]["torch"]["threads"]["intra_op"] = 2;
  EXPECT_TRUE(risk_ids(env).empty());
}

TEST(EnvRisks, ForkAsTheDefaultWithCudaOrGnuOpenMp) {
  json env = roomy();
  env["python"]["multiprocessing"]["default_start_method"] = "fork";
  EXPECT_EQ(risk_ids(env), std::vector<std::string>{"fork-with-openmp"});
  env["python"]["torch"]["cuda"]["available"] = true;
  EXPECT_TRUE(has(risk_ids(env), "fork-with-cuda"));
  // One intra-op thread, or another OpenMP runtime: no libgomp pool to break.
  env["python"]["torch"]["threads"]["intra_op"] = 1;
  EXPECT_EQ(risk_ids(env), std::vector<std::string>{"fork-with-cuda"});
  env["python"]["torch"]["threads"]["intra_op"] = 8;
  env["python"]["torch"]["openmp_runtimes"] = {"libiomp5.so"};
  EXPECT_EQ(risk_ids(env), std::vector<std::string>{"fork-with-cuda"});
}

// A risk a catalog case shows names the case's page; one without a case says its why alone, and
// the rules themselves name no case (the catalog does: harness/catalog/known_messages.h).
// A program that did not import torch says nothing of whether its interpreter has one.
TEST(EnvPythonRows, TorchTheProgramDidNotImportIsNotSaidToBeMissing) {
  json env = {{"python",
               {{"source", "bootstrap"},
                {"status", "ok"},
                {"python", {{"version", "3.11.2"}, {"executable", "/usr/bin/python3"}}},
                {"torch", {{"missing", "the program did not import torch"}}}}}};
  std::string torch;
  for (const auto& row :
       fc::reports::python_rows(fc::reports::read_as<fc::reports::Environment>(env)))
    if (row.label == "torch") torch = row.value;
  EXPECT_EQ(torch, "not imported by the program");
  env["python"]["source"] = "probe";  // forkcheck env's probe: it tried the import itself
  env["python"]["torch"]["missing"] = "ModuleNotFoundError: No module named 'torch'";
  for (const auto& row :
       fc::reports::python_rows(fc::reports::read_as<fc::reports::Environment>(env)))
    if (row.label == "torch") torch = row.value;
  EXPECT_EQ(torch.rfind("not installed for /usr/bin/python3", 0), 0u) << torch;
}

TEST(EnvRisks, ARisksWhyNamesItsCasesPageOnlyWhenTheCatalogGaveOne) {
  json env = roomy();
  env["python"]["multiprocessing"]["default_start_method"] = "fork";
  json risks = risks_of(env);
  ASSERT_EQ(risks.size(), 1u) << risks;
  EXPECT_FALSE(risks[0].contains("case")) << risks[0];
  const std::string why = why_of(risks[0]);
  EXPECT_EQ(why, risks[0].value("why", ""));
  EXPECT_EQ(why.find("forkcheck"), std::string::npos) << why;
  risks[0]["case"] = "some-case";
  EXPECT_EQ(why_of(risks[0]), why + " (forkcheck list some-case)");
}

}  // namespace
