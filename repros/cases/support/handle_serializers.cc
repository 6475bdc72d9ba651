#include "cases/support/handle_serializers.h"

#include <functional>
#include <stdexcept>
#include <string>

#include <forkcheck/launch.h>

namespace fc::cases::handle_payload {
namespace {

using nlohmann::json;

constexpr const char* kHandleKey = "$os_handle";  // in memory: a handle of this process
constexpr const char* kTicketKey = "$dup_fd";     // on the wire: a ticket for a duplicate

bool is_marker(const json& v, const char* key) {
  return v.is_object() && v.size() == 1 && v.contains(key);
}

// A copy of `v` with every marker of kind `key` replaced by what `replace` makes of it, given its
// path ("payload.instance.socket") for messages.
json rewrite(const json& v, const std::string& path, const char* key,
             const std::function<json(const json&, const std::string&)>& replace) {
  if (is_marker(v, key)) return replace(v, path);
  if (v.is_object()) {
    json out = json::object();
    for (auto it = v.begin(); it != v.end(); ++it)
      out[it.key()] = rewrite(it.value(), path + "." + it.key(), key, replace);
    return out;
  }
  if (v.is_array()) {
    json out = json::array();
    for (std::size_t i = 0; i < v.size(); ++i)
      out.push_back(rewrite(v[i], path + "[" + std::to_string(i) + "]", key, replace));
    return out;
  }
  return v;
}

}  // namespace

json os_handle(std::intptr_t handle) { return {{kHandleKey, handle}}; }

bool is_os_handle(const json& value) { return is_marker(value, kHandleKey); }

std::intptr_t handle_of(const json& value) {
  if (!is_os_handle(value)) throw std::invalid_argument("not an OS handle: " + value.dump());
  return value.at(kHandleKey).get<std::intptr_t>();
}

json RefusingSerializer::dump(const json& payload) {
  return rewrite(payload, "payload", kHandleKey,
                 [](const json& h, const std::string& path) -> json {
                   const os_handle::Info info = os_handle::inspect(handle_of(h));
                   throw launch::NotSerializable("cannot serialize '" + info.kind + "' object (" +
                                                 info.text + ", at " + path + ")");
                 });
}

json DupFdReducer::dump(const json& payload) {
  return rewrite(payload, "payload", kHandleKey, [this](const json& h, const std::string&) {
    return json{{kTicketKey, sharer_.share(handle_of(h))}};
  });
}

json load(const json& wire) {
  return rewrite(wire, "payload", kTicketKey, [](const json& t, const std::string& path) {
    try {
      return os_handle(os_handle::redeem(t.at(kTicketKey)));
    } catch (const std::exception& e) {
      throw std::runtime_error("redeeming the descriptor at " + path + ": " + e.what());
    }
  });
}

}  // namespace fc::cases::handle_payload
