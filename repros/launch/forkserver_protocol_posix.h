// Messages between the forkserver client (Launcher) and the server process.
//
// Control socket (SOCK_STREAM), client -> server, one request per worker:
//   RequestHeader, with SCM_RIGHTS {result pipe write end, status socket end}, then the worker
//   name (name_len bytes) and the payload JSON text (payload_len bytes).
// Status socket (one socketpair per worker), server -> client:
//   StatusMessage{kPid, pid} once forked (or {kForkFailed, errno}), then {kWaitStatus, status}
//   when the server reaped it; then the server closes its end.
#pragma once

#include <cstdint>

namespace fc::launch::detail {

struct RequestHeader {
  std::uint32_t magic;
  std::uint32_t name_len;
  std::uint64_t payload_len;
};
constexpr std::uint32_t kRequestMagic = 0x46434b31;  // "FCK1"
constexpr std::uint32_t kMaxNameLen = 1u << 20;      // a sanity bound against a garbled stream

struct StatusMessage {
  std::int32_t tag;
  std::int32_t value;
};
enum StatusTag : std::int32_t { kPid = 1, kForkFailed = 2, kWaitStatus = 3 };

}  // namespace fc::launch::detail
