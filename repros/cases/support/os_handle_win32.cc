// os_handle.h on Windows: a handle is inspected (getsockopt tells a socket from anything else),
// not shared. multiprocessing there passes a socket with WSADuplicateSocket (socket.share /
// socket.fromshare) rather than SCM_RIGHTS; this project has no such path, and the case skips the
// variants that would need it.
#include <stdexcept>
#include <string>

#include "cases/support/os_handle.h"
#include "launch/win32.h"

// Winsock after <windows.h>, which win32.h includes lean (so without the old winsock.h).
#include <winsock2.h>

namespace fc::cases::os_handle {
namespace {
const char* const kNoSharing =
    "handing a socket to another process is not implemented on Windows (multiprocessing uses "
    "WSADuplicateSocket there, not SCM_RIGHTS)";
}  // namespace

Info inspect(std::intptr_t handle) {
  int type = 0;
  int len = sizeof type;
  const bool socket = ::getsockopt(static_cast<SOCKET>(handle), SOL_SOCKET, SO_TYPE,
                                   reinterpret_cast<char*>(&type), &len) == 0;
  Info info;
  info.kind = socket ? "socket" : "handle";
  info.text = info.kind + " " + std::to_string(handle);
  return info;  // no identity: Windows shows none that duplicates share
}

void close_handle(std::intptr_t handle) { ::closesocket(static_cast<SOCKET>(handle)); }

const char* sharing_unavailable_reason() { return kNoSharing; }

struct Sharer::Impl {};

Sharer::Sharer() { throw std::logic_error(kNoSharing); }
Sharer::~Sharer() = default;
nlohmann::json Sharer::share(std::intptr_t) { throw std::logic_error(kNoSharing); }
int Sharer::redeemed() const { return 0; }
std::intptr_t redeem(const nlohmann::json&) { throw std::logic_error(kNoSharing); }

}  // namespace fc::cases::os_handle
