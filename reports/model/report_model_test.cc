// The report model against the schema: every type reads exactly the keys its object has in
// reports/report.schema.json (a key added to one and not the other fails here), and reading is
// lenient the way the formats need it (an older or hand-edited report).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reports/model/report_model.h"
#include "reports/model/report_model_json.h"
#include "reports/synthetic_report.h"

namespace fc::reports {
namespace {

using nlohmann::json;

json schema() {
  std::ifstream in(std::filesystem::path(FC_REPORT_SCHEMA));
  EXPECT_TRUE(in) << FC_REPORT_SCHEMA;
  return json::parse(in);
}

// The object schema at a JSON pointer, following one $ref.
const json& object_at(const json& s, const std::string& pointer) {
  const json& o = s.at(json::json_pointer(pointer));
  if (o.contains("$ref")) return s.at(json::json_pointer(o["$ref"].get<std::string>().substr(1)));
  return o;
}

std::set<std::string> schema_keys(const json& s, const std::string& pointer) {
  std::set<std::string> keys;
  for (const auto& [k, v] : object_at(s, pointer).at("properties").items()) keys.insert(k);
  return keys;
}

template <class T>
std::set<std::string> model_keys() {
  const std::vector<std::string> keys = report_keys(static_cast<const T*>(nullptr));
  std::set<std::string> unique(keys.begin(), keys.end());
  EXPECT_EQ(unique.size(), keys.size()) << "a key listed twice";
  return unique;
}

#define EXPECT_MODEL_MATCHES(Type, pointer) \
  EXPECT_EQ(model_keys<Type>(), schema_keys(s, pointer)) << #Type << " against " << (pointer)

TEST(ReportModel, EveryTypeReadsExactlyTheKeysOfItsObjectInTheSchema) {
  const json s = schema();
  const std::string variant = "/$defs/variant/properties";
  const std::string watchdog = variant + "/watchdog/properties";
  EXPECT_MODEL_MATCHES(Report, "");
  EXPECT_MODEL_MATCHES(Tool, "/properties/tool");
  EXPECT_MODEL_MATCHES(fc::reports::Run, "/$defs/run");
  EXPECT_MODEL_MATCHES(Summary, "/$defs/summary");
  EXPECT_MODEL_MATCHES(Case, "/$defs/case");
  EXPECT_MODEL_MATCHES(Source, "/$defs/case/properties/source");
  EXPECT_MODEL_MATCHES(Explain, "/$defs/case/properties/explains/items");
  EXPECT_MODEL_MATCHES(NotSelected, "/$defs/case/properties/not_selected/items");
  EXPECT_MODEL_MATCHES(Variant, "/$defs/variant");
  EXPECT_MODEL_MATCHES(Exit, variant + "/exit");
  EXPECT_MODEL_MATCHES(Watchdog, variant + "/watchdog");
  EXPECT_MODEL_MATCHES(TreeLook, watchdog + "/tree");
  EXPECT_MODEL_MATCHES(Sleep, watchdog + "/tree/properties/sleep");
  EXPECT_MODEL_MATCHES(Alarm, watchdog + "/tree/properties/sleep/properties/alarm");
  EXPECT_MODEL_MATCHES(Activity, watchdog + "/activity");
  EXPECT_MODEL_MATCHES(StuckProcess, watchdog + "/stuck");
  EXPECT_MODEL_MATCHES(StuckProcess, variant + "/stall/properties/process");
  EXPECT_MODEL_MATCHES(Attached, watchdog + "/attached");
  EXPECT_MODEL_MATCHES(LookSignal, watchdog + "/look_signals/items");
  EXPECT_MODEL_MATCHES(DiedAfterLook, watchdog + "/died_after_look");
  EXPECT_MODEL_MATCHES(StepHang, variant + "/hang");
  EXPECT_MODEL_MATCHES(ProtocolError, variant + "/protocol_error");
  EXPECT_MODEL_MATCHES(Cause, variant + "/cause");
  EXPECT_MODEL_MATCHES(Thread, variant + "/stacks/items");
  EXPECT_MODEL_MATCHES(PythonFrame, variant + "/stacks/items/properties/python/items");
  const std::string chain = variant + "/wait_chain/properties";
  EXPECT_MODEL_MATCHES(WaitChain, variant + "/wait_chain");
  EXPECT_MODEL_MATCHES(WaitLink, chain + "/links/items");
  EXPECT_MODEL_MATCHES(WaitFile, chain + "/links/items/properties/files/items");
  EXPECT_MODEL_MATCHES(FileHolder,
                       chain + "/links/items/properties/files/items/properties/holders/items");
  EXPECT_MODEL_MATCHES(FileHolder,
                       chain + "/links/items/properties/files/items/properties/peer_holders/items");
  EXPECT_MODEL_MATCHES(ChainProcess, chain + "/processes/additionalProperties");
  const std::string details = variant + "/details/properties";
  EXPECT_MODEL_MATCHES(ForkEvent, details + "/forks/items");
  EXPECT_MODEL_MATCHES(ForkHazard, details + "/forks/items/properties/hazards/items");
  EXPECT_MODEL_MATCHES(ForkThread, details + "/forks/items/properties/thread");
  EXPECT_MODEL_MATCHES(ChildEnd, details + "/forks/items/properties/child_end");
  EXPECT_MODEL_MATCHES(WatchSummary, details + "/watch");
  EXPECT_MODEL_MATCHES(WatchTotals, details + "/watch/properties/totals");
  EXPECT_MODEL_MATCHES(WatchFinding, details + "/watch/properties/findings/items");
  EXPECT_MODEL_MATCHES(ExplainedBy, details + "/explained_by/items");
  EXPECT_MODEL_MATCHES(ForkGuard, details + "/fork_guards/items");
  EXPECT_MODEL_MATCHES(WorkerHomeFact, details + "/worker_homes/items");
  const std::string memory = variant + "/memory/properties";
  EXPECT_MODEL_MATCHES(Memory, variant + "/memory");
  EXPECT_MODEL_MATCHES(ProcessSamples, memory + "/processes/items");
  EXPECT_MODEL_MATCHES(MemorySample, memory + "/processes/items/properties/first");
  EXPECT_MODEL_MATCHES(OomFacts, memory + "/oom");
  EXPECT_MODEL_MATCHES(OomKill, memory + "/oom/properties/killed/items");
  EXPECT_MODEL_MATCHES(CgroupOomKills, memory + "/oom/properties/cgroups/items");
  EXPECT_MODEL_MATCHES(ProcessEnds, variant + "/process_ends");
  EXPECT_MODEL_MATCHES(ProcessEndList, "/$defs/process_end_list");
  EXPECT_MODEL_MATCHES(ProcessEnd, "/$defs/process_end_list/properties/list/items");
  EXPECT_MODEL_MATCHES(Stall, variant + "/stall");
  // The environment: an error alone, or the fingerprint (oneOf).
  std::set<std::string> environment = schema_keys(s, "/$defs/environment/oneOf/0");
  for (const auto& k : schema_keys(s, "/$defs/environment/oneOf/1")) environment.insert(k);
  EXPECT_EQ(model_keys<Environment>(), environment) << "Environment";
  const std::string env = "/$defs/environment/oneOf/1/properties";
  EXPECT_MODEL_MATCHES(EnvMachine, env + "/machine");
  EXPECT_MODEL_MATCHES(EnvDevShm, env + "/machine/properties/dev_shm");
  EXPECT_MODEL_MATCHES(EnvOpenFiles, env + "/machine/properties/open_files");
  EXPECT_MODEL_MATCHES(EnvMachineCpus, env + "/machine/properties/cpus");
  EXPECT_MODEL_MATCHES(EnvPython, env + "/python");
  EXPECT_MODEL_MATCHES(EnvInterpreter, env + "/python/properties/python");
  EXPECT_MODEL_MATCHES(EnvTorch, env + "/python/properties/torch");
  EXPECT_MODEL_MATCHES(EnvTorchThreads, env + "/python/properties/torch/properties/threads");
  EXPECT_MODEL_MATCHES(EnvTorchCuda, env + "/python/properties/torch/properties/cuda");
  EXPECT_MODEL_MATCHES(EnvCudaDevice,
                       env + "/python/properties/torch/properties/cuda/properties/devices/items");
  EXPECT_MODEL_MATCHES(EnvModule, env + "/python/properties/numpy");
  EXPECT_MODEL_MATCHES(EnvMultiprocessing, env + "/python/properties/multiprocessing");
  EXPECT_MODEL_MATCHES(EnvThreads, env + "/threads");
  EXPECT_MODEL_MATCHES(EnvRisk, env + "/risks/items");
  EXPECT_MODEL_MATCHES(TorchCases, env + "/torch_cases");
  EXPECT_MODEL_MATCHES(TorchBuild, env + "/torch_cases/properties/last_build");
  EXPECT_MODEL_MATCHES(EnvCollectedBy, env + "/collected_by");
  EXPECT_MODEL_MATCHES(EnvLibtorch, env + "/libtorch");
  EXPECT_MODEL_MATCHES(EnvPythonTorch, env + "/python_torch");
  const std::string process = "/$defs/python_process/properties";
  EXPECT_MODEL_MATCHES(PythonSide, variant + "/python");
  EXPECT_MODEL_MATCHES(PythonProcess, "/$defs/python_process");
  EXPECT_MODEL_MATCHES(PythonFrame, "/$defs/python_frame");
  EXPECT_MODEL_MATCHES(PythonTest, "/$defs/python_test");
  EXPECT_MODEL_MATCHES(PythonThread, "/$defs/python_thread");
  EXPECT_MODEL_MATCHES(PythonInterpreter, process + "/python");
  EXPECT_MODEL_MATCHES(PythonPaths, process + "/paths");
  EXPECT_MODEL_MATCHES(PythonFork, process + "/forks/items");
  EXPECT_MODEL_MATCHES(PythonException, process + "/exceptions/items");
  EXPECT_MODEL_MATCHES(PythonChildExit, process + "/child_exits/items");
  EXPECT_MODEL_MATCHES(PythonStartMethod, process + "/start_methods/items");
  EXPECT_MODEL_MATCHES(PythonEndAsked, process + "/ends_asked/items");
  EXPECT_MODEL_MATCHES(PythonSignalHandler, process + "/signal_handlers/items");
  EXPECT_MODEL_MATCHES(PythonSignalSent, process + "/signals_sent/items");
  EXPECT_MODEL_MATCHES(PythonEndLooked, process + "/ends_looked/items");
  EXPECT_MODEL_MATCHES(PythonPoolBroken, process + "/pools_broken/items");
  EXPECT_MODEL_MATCHES(PythonExit, process + "/exit");
  EXPECT_MODEL_MATCHES(PythonCrash, process + "/crash");
  EXPECT_MODEL_MATCHES(PythonCrashThread, process + "/crash/properties/threads/items");
}

const Variant& variant_named(const Report& r, const std::string& c, const std::string& v) {
  for (const Case& k : r.cases)
    for (const Variant& x : k.variants)
      if (k.id == c && x.name == v) return x;
  throw std::runtime_error("no variant " + c + "/" + v);
}

TEST(ReportModel, ReadsTheReportsValuesIntoTheirMembers) {
  const json j = testing::synthetic_report();
  const Report r = read_report(j);
  EXPECT_EQ(r.schema_version, j["schema_version"]);
  ASSERT_EQ(r.cases.size(), j["cases"].size());
  EXPECT_EQ(r.summary.variants, j["summary"]["variants"]);
  const Variant& busy = variant_named(r, "watchdog-outcomes", "fork-busy");
  EXPECT_EQ(busy.outcome, "timeout");
  ASSERT_TRUE(busy.watchdog.tree.has_value());
  EXPECT_EQ(busy.watchdog.tree->state, "working");
  EXPECT_EQ(busy.watchdog.tree->looks, 600);
  ASSERT_FALSE(busy.stacks.empty());
  EXPECT_EQ(busy.stacks[0].syscall, "read");
  const Variant& channel = variant_named(r, "watchdog-outcomes", "spawn-channel");
  ASSERT_TRUE(channel.protocol_error.has_value());
  EXPECT_EQ(channel.protocol_error->why, "not JSON: <unterminated> object");
  EXPECT_FALSE(busy.protocol_error.has_value());
  EXPECT_TRUE(variant_named(r, "watchdog-outcomes", "forkserver-late").watchdog.exited_by_itself);
}

TEST(ReportModel, StdoutAndStderrAreReadUnderTheirReportNames) {
  const Variant v = read_variant({{"stdout", "out"}, {"stderr", "err"}});
  EXPECT_EQ(v.stdout_text, "out");
  EXPECT_EQ(v.stderr_text, "err");
}

TEST(ReportModel, AKeyOfAnotherTypeKeepsItsDefaultAndTheRestIsRead) {
  const Variant v = read_variant({{"name", 7},
                                  {"outcome", "hang"},
                                  {"duration_s", "slow"},
                                  {"exit", {{"code", nullptr}, {"signal", 9}}},
                                  {"hang", "not an object"},
                                  {"stacks", {{{"pid", "x"}, {"tid", 5}}, "not a thread"}},
                                  {"watchdog", {{"timeout_s", 3.5}, {"tree", nullptr}}}});
  EXPECT_EQ(v.name, "");
  EXPECT_EQ(v.outcome, "hang");
  EXPECT_EQ(v.duration_s, 0.0);
  EXPECT_FALSE(v.exit.code.has_value());
  EXPECT_EQ(v.exit.signal, 9);
  EXPECT_FALSE(v.hang.has_value());
  ASSERT_EQ(v.stacks.size(), 2u);
  EXPECT_EQ(v.stacks[0].pid, 0);
  EXPECT_EQ(v.stacks[0].tid, 5);
  EXPECT_EQ(v.watchdog.timeout_s, 3.5);
  EXPECT_FALSE(v.watchdog.tree.has_value());
  EXPECT_FALSE(v.watchdog.called_after_s.has_value());
}

// Windows records a crash's NTSTATUS as the signal, a 32-bit unsigned number: kept whole.
// The Python side as the harness keeps it (python_channel_posix.cc), and an odd one: a field of
// another type keeps its default, the rest of the process is read.
TEST(ReportModel, ThePythonSideIsReadProcessByProcessAndEventByEvent) {
  const json v = {
      {"python",
       {{"processes",
         {{{"pid", 41},
           {"born", "exec"},
           {"argv", {"train.py", "--epochs", "2"}},
           {"paths", {{"stdlib", "/usr/lib/python3.11"}, {"purelib", nullptr}}},
           {"exceptions",
            {{{"where", "main"},
              {"type", "builtins.ValueError"},
              {"message", "bad row"},
              {"frames", {{{"file", "/w/train.py"}, {"line", 9}, {"function", "main"}}}},
              {"test", nullptr},
              {"at_s", 1.5}}}},
           {"child_exits", {{{"pid", 42}, {"returncode", -9}, {"signal", "SIGKILL"}}}},
           {"forks", {{{"seq", 3}, {"last_seq", 7}, {"folded", 5}, {"stack", json::array()}}}},
           {"exit", {{"code", "bye"}, {"at_s", 2.0}}}},
          {{"pid", 42},
           {"born", "fork"},
           {"argv", "not a list"},
           {"exceptions", {{"where", "main"}}},
           {"crash", {{"fatal", "Segmentation fault"}, {"threads", {{{"current", true}}}}}}}}},
        {"dropped_by", {{"fork", 2}}},
        {"bounds", {{"forks", 200}}}}}};
  const Variant m = read_variant(v);
  ASSERT_TRUE(m.python);
  ASSERT_EQ(m.python->processes.size(), 2u);
  const PythonProcess& main = m.python->processes[0];
  EXPECT_EQ(main.pid, 41);
  EXPECT_EQ(main.argv, (std::vector<std::string>{"train.py", "--epochs", "2"}));
  ASSERT_TRUE(main.paths);
  EXPECT_EQ(main.paths->stdlib, "/usr/lib/python3.11");
  EXPECT_EQ(main.paths->purelib, "") << "null: none on sys.path";
  ASSERT_EQ(main.exceptions.size(), 1u);
  EXPECT_EQ(main.exceptions[0].type, "builtins.ValueError");
  ASSERT_EQ(main.exceptions[0].frames.size(), 1u);
  EXPECT_EQ(main.exceptions[0].frames[0].line, 9);
  EXPECT_FALSE(main.exceptions[0].test);
  EXPECT_EQ(main.child_exits.at(0).returncode, -9);
  EXPECT_EQ(main.forks.at(0).last_seq, 7);
  ASSERT_TRUE(main.exit);
  EXPECT_EQ(main.exit->code, "bye");
  const PythonProcess& child = m.python->processes[1];
  EXPECT_TRUE(child.argv.empty()) << "text where a list belongs: the default";
  EXPECT_TRUE(child.exceptions.empty()) << "an object where a list belongs: the default";
  EXPECT_EQ(child.born, "fork") << "the rest of the process is read";
  ASSERT_TRUE(child.crash);
  EXPECT_TRUE(child.crash->threads.at(0).current);
  EXPECT_EQ(m.python->dropped_by.at("fork"), 2);
  EXPECT_EQ(m.python->bounds.at("forks"), 200);
  EXPECT_FALSE(read_variant(json{{"python", nullptr}}).python) << "told nothing";
}

TEST(ReportModel, AWindowsCrashStatusAsTheSignalKeepsItsValue) {
  const Variant v = read_variant({{"exit", {{"code", nullptr}, {"signal", 3221225477U}}},
                                  {"protocol_error", {{"line", "x"}, {"why", "y"}, {"lines", 3}}}});
  EXPECT_EQ(v.exit.signal, 3221225477LL);
  ASSERT_TRUE(v.protocol_error.has_value());
  EXPECT_EQ(v.protocol_error->lines, 3);
}

TEST(ReportModel, NotAnObjectIsAnEmptyReport) {
  for (const json& j : {json(), json(3), json::array()}) {
    const Report r = read_report(j);
    EXPECT_TRUE(r.cases.empty());
    EXPECT_EQ(r.summary.variants, 0);
  }
}

}  // namespace
}  // namespace fc::reports
