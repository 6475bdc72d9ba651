#include "harness/supervise/child_environment.h"

#include <map>
#include <set>

namespace fc::harness {

EnvVars python_bootstrap_env(const LaunchSpec& spec, const std::string& channel_address,
                             int dump_signal, int stacks_signal, const char* inherited_pythonpath) {
  std::string before = inherited_pythonpath ? inherited_pythonpath : "";
  for (const auto& [k, v] : spec.env)
    if (k == "PYTHONPATH") before = v;
  EnvVars vars;
  vars.emplace_back("PYTHONPATH",
                    spec.python_bootstrap + (before.empty() ? std::string() : ":" + before));
  vars.emplace_back("FORKCHECK_PY_CHANNEL", channel_address);
  if (!spec.python_bytecode.empty())
    vars.emplace_back("FORKCHECK_PY_BYTECODE", spec.python_bytecode);
  vars.emplace_back("FORKCHECK_PY_SIGNAL", std::to_string(dump_signal));
  vars.emplace_back("FORKCHECK_PY_STACKS_SIGNAL", std::to_string(stacks_signal));
  return vars;
}

std::vector<std::string> child_environment(const std::vector<std::string>& inherited,
                                           const EnvVars& vars) {
  std::set<std::string> set_here = {"FORKCHECK_CHANNEL_FD"};
  for (const auto& [k, v] : vars) set_here.insert(k);
  std::vector<std::string> out;
  for (const auto& entry : inherited)
    if (!set_here.count(entry.substr(0, entry.find('=')))) out.push_back(entry);
  // Each name once, where it was first given, with the last value given for it.
  std::map<std::string, std::string> last;
  for (const auto& [k, v] : vars) last[k] = v;
  for (const auto& [k, v] : vars) {
    const auto it = last.find(k);
    if (it == last.end()) continue;
    out.push_back(k + "=" + it->second);
    last.erase(it);
  }
  return out;
}

}  // namespace fc::harness
