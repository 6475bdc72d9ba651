// The folder a command writes its reports into, shared by every command that writes one.
// Without --out each run gets a folder of its own, forkcheck-report/COMMAND-YYYYMMDD-HHMMSS
// (-2, -3... when two runs start in the same second), and forkcheck-report/latest points at the
// newest: nothing an earlier run wrote is deleted. With --out DIR the run writes into DIR,
// replacing the report files a previous run left there (and only those: reports::remove_run_files).
// Either way the run holds the folder's lock while it lives (platform/folder_lock.h): a second
// run into a folder a live run holds is refused, before it touches anything there.
#pragma once

#include <filesystem>
#include <string>

namespace fc::harness {

// Where runs go when --out is not given.
inline const std::filesystem::path kReportsRoot = "forkcheck-report";

// The folder for this run, made: `given` when not empty (created if need be, checked
// writable), else a new run folder for `command` under kReportsRoot, claimed atomically (two runs
// started in the same second get two folders), and kReportsRoot/latest pointed at it. Call it
// once the input is known good: bad input makes no folder. Throws UsageError naming the problem.
std::filesystem::path make_out_dir(const std::filesystem::path& given, const std::string& command);

// Makes sure `dir` (given by the user) exists and is writable, and takes its lock for the rest
// of this process's life; throws UsageError naming the problem (for a folder a live run holds:
// the folder and that run's pid). Never touches kReportsRoot/latest.
void prepare_out_dir(const std::filesystem::path& dir);

}  // namespace fc::harness
