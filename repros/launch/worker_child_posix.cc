#include "launch/worker_child_posix.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "launch/fdio_posix.h"

namespace fc::launch::detail {
namespace {

using nlohmann::json;

std::string error_document(const std::string& message) {
  json doc = json::object();
  doc["error"] = message;
  // An exception text is not ours to vet: replace invalid UTF-8 rather than lose the message.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

int write_result(const std::string& doc, int code, int result_fd) {
  // If the parent is gone there is no one to tell; the exit code still says what happened.
  write_all(result_fd, doc.data(), doc.size());
  ::close(result_fd);
  return code;
}

}  // namespace

int run_worker(WorkerFn fn, const json& payload, int result_fd) noexcept {
  std::string doc;
  int code = 0;
  try {
    json result = fn(payload);
    try {
      json ok = json::object();
      ok["ok"] = std::move(result);
      doc = ok.dump();
    } catch (const json::exception& e) {
      doc = error_document(std::string("the result cannot be serialized: ") + e.what());
      code = 1;
    }
  } catch (const std::exception& e) {
    doc = error_document(e.what());
    code = 1;
  } catch (...) {
    doc = error_document("unknown exception");
    code = 1;
  }
  return write_result(doc, code, result_fd);
}

int run_named_worker(const std::string& name, const std::string& payload_text,
                     int result_fd) noexcept {
  WorkerFn fn = find_worker(name);
  if (fn == nullptr) return write_result(error_document("unknown worker '" + name + "'"), 1, result_fd);
  json payload;
  try {
    payload = json::parse(payload_text);
  } catch (const std::exception& e) {
    return write_result(error_document(std::string("bad payload: ") + e.what()), 1, result_fd);
  }
  return run_worker(fn, payload, result_fd);
}

void exit_child(int code) noexcept {
  try {
    std::cout.flush();
    std::cerr.flush();
  } catch (...) {
  }
  std::fflush(nullptr);
  ::_exit(code);
}

}  // namespace fc::launch::detail
