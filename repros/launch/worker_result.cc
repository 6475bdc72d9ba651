#include "launch/worker_result.h"

#include <exception>

namespace fc::launch::detail {
namespace {

using nlohmann::json;

std::string error_document(const std::string& message) {
  json doc = json::object();
  doc["error"] = message;
  // An exception text is not ours to vet: replace invalid UTF-8 rather than lose the message.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

WorkerResult run_worker_function(WorkerFn fn, const json& payload) noexcept {
  WorkerResult r;
  try {
    json result = fn(payload);
    try {
      json ok = json::object();
      ok["ok"] = std::move(result);
      r.document = ok.dump();
    } catch (const json::exception& e) {
      r.document = error_document(std::string("the result cannot be serialized: ") + e.what());
      r.exit_code = 1;
    }
  } catch (const std::exception& e) {
    r.document = error_document(e.what());
    r.exit_code = 1;
  } catch (...) {
    r.document = error_document("unknown exception");
    r.exit_code = 1;
  }
  return r;
}

WorkerResult run_worker_by_name(const std::string& name, const std::string& payload_text) noexcept {
  WorkerFn fn = find_worker(name);
  if (fn == nullptr) return {error_document("unknown worker '" + name + "'"), 1};
  json payload;
  try {
    payload = json::parse(payload_text);
  } catch (const std::exception& e) {
    return {error_document(std::string("bad payload: ") + e.what()), 1};
  }
  return run_worker_function(fn, payload);
}

}  // namespace fc::launch::detail
