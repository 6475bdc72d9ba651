// The model's JSON mapping, for what checks it: each type's from_json (nlohmann's hook, found by
// argument-dependent lookup) and the report keys it reads, which the tests hold against the
// schema's properties. The formats use read_report() (report_model.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/model/report_model.h"

// Declares, for each type of the model, from_json and the list of keys it reads.
#define FC_REPORT_MODEL_DECLARE(Type)               \
  void from_json(const nlohmann::json& j, Type& t); \
  std::vector<std::string> report_keys(const Type* /*tag*/);

namespace fc::reports {

FC_REPORT_MODEL_DECLARE(Exit)
FC_REPORT_MODEL_DECLARE(PythonFrame)
FC_REPORT_MODEL_DECLARE(Thread)
FC_REPORT_MODEL_DECLARE(Alarm)
FC_REPORT_MODEL_DECLARE(Sleep)
FC_REPORT_MODEL_DECLARE(TreeLook)
FC_REPORT_MODEL_DECLARE(Activity)
FC_REPORT_MODEL_DECLARE(StuckProcess)
FC_REPORT_MODEL_DECLARE(Attached)
FC_REPORT_MODEL_DECLARE(LookSignal)
FC_REPORT_MODEL_DECLARE(DiedAfterLook)
FC_REPORT_MODEL_DECLARE(Watchdog)
FC_REPORT_MODEL_DECLARE(StepHang)
FC_REPORT_MODEL_DECLARE(ProtocolError)
FC_REPORT_MODEL_DECLARE(Cause)
FC_REPORT_MODEL_DECLARE(FileHolder)
FC_REPORT_MODEL_DECLARE(WaitFile)
FC_REPORT_MODEL_DECLARE(WaitLink)
FC_REPORT_MODEL_DECLARE(ChainProcess)
FC_REPORT_MODEL_DECLARE(WaitChain)
FC_REPORT_MODEL_DECLARE(MemorySample)
FC_REPORT_MODEL_DECLARE(ProcessSamples)
FC_REPORT_MODEL_DECLARE(OomKill)
FC_REPORT_MODEL_DECLARE(CgroupOomKills)
FC_REPORT_MODEL_DECLARE(OomFacts)
FC_REPORT_MODEL_DECLARE(Memory)
FC_REPORT_MODEL_DECLARE(ProcessEnd)
FC_REPORT_MODEL_DECLARE(ProcessEndList)
FC_REPORT_MODEL_DECLARE(ProcessEnds)
FC_REPORT_MODEL_DECLARE(Stall)
FC_REPORT_MODEL_DECLARE(ForkHazard)
FC_REPORT_MODEL_DECLARE(ForkThread)
FC_REPORT_MODEL_DECLARE(ChildEnd)
FC_REPORT_MODEL_DECLARE(ForkEvent)
FC_REPORT_MODEL_DECLARE(WatchTotals)
FC_REPORT_MODEL_DECLARE(WatchFinding)
FC_REPORT_MODEL_DECLARE(WatchSummary)
FC_REPORT_MODEL_DECLARE(PythonTest)
FC_REPORT_MODEL_DECLARE(PythonThread)
FC_REPORT_MODEL_DECLARE(PythonException)
FC_REPORT_MODEL_DECLARE(PythonChildExit)
FC_REPORT_MODEL_DECLARE(PythonStartMethod)
FC_REPORT_MODEL_DECLARE(PythonEndAsked)
FC_REPORT_MODEL_DECLARE(PythonSignalSent)
FC_REPORT_MODEL_DECLARE(PythonEndLooked)
FC_REPORT_MODEL_DECLARE(PythonPoolBroken)
FC_REPORT_MODEL_DECLARE(PythonSignalHandler)
FC_REPORT_MODEL_DECLARE(PythonFork)
FC_REPORT_MODEL_DECLARE(PythonExit)
FC_REPORT_MODEL_DECLARE(PythonCrashThread)
FC_REPORT_MODEL_DECLARE(PythonCrash)
FC_REPORT_MODEL_DECLARE(PythonPaths)
FC_REPORT_MODEL_DECLARE(PythonInterpreter)
FC_REPORT_MODEL_DECLARE(PythonProcess)
FC_REPORT_MODEL_DECLARE(PythonSide)
FC_REPORT_MODEL_DECLARE(Variant)
FC_REPORT_MODEL_DECLARE(EnvDevShm)
FC_REPORT_MODEL_DECLARE(EnvOpenFiles)
FC_REPORT_MODEL_DECLARE(EnvMachineCpus)
FC_REPORT_MODEL_DECLARE(EnvMachine)
FC_REPORT_MODEL_DECLARE(EnvInterpreter)
FC_REPORT_MODEL_DECLARE(EnvTorchThreads)
FC_REPORT_MODEL_DECLARE(EnvCudaDevice)
FC_REPORT_MODEL_DECLARE(EnvTorchCuda)
FC_REPORT_MODEL_DECLARE(EnvTorch)
FC_REPORT_MODEL_DECLARE(EnvModule)
FC_REPORT_MODEL_DECLARE(EnvMultiprocessing)
FC_REPORT_MODEL_DECLARE(EnvPython)
FC_REPORT_MODEL_DECLARE(EnvThreads)
FC_REPORT_MODEL_DECLARE(TorchBuild)
FC_REPORT_MODEL_DECLARE(TorchCases)
FC_REPORT_MODEL_DECLARE(EnvRisk)
FC_REPORT_MODEL_DECLARE(EnvCollectedBy)
FC_REPORT_MODEL_DECLARE(EnvLibtorch)
FC_REPORT_MODEL_DECLARE(EnvPythonTorch)
FC_REPORT_MODEL_DECLARE(CatalogLibtorch)
FC_REPORT_MODEL_DECLARE(Environment)
FC_REPORT_MODEL_DECLARE(ExplainedBy)
FC_REPORT_MODEL_DECLARE(ForkGuard)
FC_REPORT_MODEL_DECLARE(WorkerHomeFact)
FC_REPORT_MODEL_DECLARE(Source)
FC_REPORT_MODEL_DECLARE(Explain)
FC_REPORT_MODEL_DECLARE(NotSelected)
FC_REPORT_MODEL_DECLARE(Case)
FC_REPORT_MODEL_DECLARE(Run)
FC_REPORT_MODEL_DECLARE(Summary)
FC_REPORT_MODEL_DECLARE(Tool)
FC_REPORT_MODEL_DECLARE(Report)

// A part of a report read as its type, for code that holds that part alone (a run log's record).
template <class T>
T read_as(const nlohmann::json& j) {
  T t;
  from_json(j, t);
  return t;
}

}  // namespace fc::reports
