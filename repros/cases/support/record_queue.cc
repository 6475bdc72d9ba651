// record_queue.h: frames over loopback TCP, on every OS alike (loopback.h has the OS's sockets).
#include "cases/support/record_queue.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

namespace fc::cases::record_queue {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kLoopback = "127.0.0.1";
constexpr std::size_t kHeader = 4;

std::string seconds(milliseconds d) {
  char s[32];
  std::snprintf(s, sizeof s, "%g s", static_cast<double>(d.count()) / 1000);
  return s;
}

std::size_t decode_length(const char* p) {
  std::size_t n = 0;
  for (std::size_t i = kHeader; i-- > 0;) n = (n << 8) | static_cast<unsigned char>(p[i]);
  return n;
}

}  // namespace

std::string frame(const std::string& message) {
  if (message.size() > kMaxMessage)
    throw std::runtime_error("a message of " + std::to_string(message.size()) +
                             " bytes: the queue takes at most " + std::to_string(kMaxMessage));
  std::string f(kHeader, '\0');
  for (std::size_t i = 0; i < kHeader; ++i)
    f[i] = static_cast<char>((message.size() >> (8 * i)) & 0xff);
  return f + message;
}

// ---- the writer --------------------------------------------------------------------------------

Writer::Writer(std::string port_file, int actors, milliseconds silence)
    : port_file_(std::move(port_file)), actors_(actors), silence_(silence) {
  listener_ = loopback::listen_on_loopback(port_);
  // Written aside and renamed into place: an actor polling for the file reads all of it or none.
  const std::string aside = port_file_ + ".tmp";
  {
    std::ofstream out(aside, std::ios::trunc);
    out << port_ << "\n";
    out.close();
    if (!out) throw std::runtime_error("the writer could not write its port to " + aside);
  }
  std::error_code ec;
  fs::rename(aside, port_file_, ec);
  if (ec)
    throw std::runtime_error("the writer could not publish its port as " + port_file_ + ": " +
                             ec.message());
}

Writer::~Writer() {
  std::error_code ec;
  fs::remove(port_file_, ec);  // best effort: the case removes its scratch directory anyway
}

bool Writer::next(std::string& message) {
  auto last_heard = Clock::now();  // this call's silence is counted from here
  while (ready_.empty()) {
    if (ends_ >= actors_) return false;
    const auto quiet = std::chrono::duration_cast<milliseconds>(Clock::now() - last_heard);
    if (quiet >= silence_)
      throw std::runtime_error(
          "the writer heard nothing for " + seconds(silence_) + "; ends from " +
          std::to_string(ends_) + " of " + std::to_string(actors_) + " actors (" +
          std::to_string(connections_) + " connected)" +
          (accept_error_.empty() ? "" : "; an accept failed: " + accept_error_));
    std::vector<const loopback::Socket*> sockets{&listener_};
    for (const Connection& c : open_) sockets.push_back(&c.socket);
    const std::vector<bool> readable =
        loopback::wait_readable(sockets, static_cast<int>((silence_ - quiet).count()));
    bool heard = false;
    // Backwards, so that erasing an ended connection leaves the indices still to visit valid.
    for (std::size_t i = open_.size(); i-- > 0;) {
      if (!readable[i + 1]) continue;
      heard = true;
      if (!read_from(open_[i])) {
        open_.erase(open_.begin() + static_cast<std::ptrdiff_t>(i));
        ++ends_;
      }
    }
    if (readable[0] && accept_one()) heard = true;
    if (heard) last_heard = Clock::now();
  }
  message = std::move(ready_.front());
  ready_.pop_front();
  return true;
}

bool Writer::accept_one() {
  Connection c;
  c.socket = loopback::accept_connection(listener_, c.peer_port);
  if (!c.socket) {
    // A peer that reset before it was accepted is no actor of ours to wait for; whatever else
    // failed shows in the silence error, if it comes to that.
    accept_error_ = loopback::last_error();
    return false;
  }
  open_.push_back(std::move(c));
  ++connections_;
  return true;
}

bool Writer::read_from(Connection& c) {
  char buf[64 * 1024];
  const long n = loopback::receive(c.socket, buf, sizeof buf);
  const std::string who = "an actor's connection (from port " + std::to_string(c.peer_port) + ")";
  if (n < 0) throw std::runtime_error(who + " broke: " + loopback::last_error());
  if (n == 0) {
    if (c.pending.empty()) return false;  // the actor's end, after a whole frame
    const std::string cut = c.pending.size() < kHeader
                                ? std::to_string(c.pending.size()) + " bytes of a frame's header"
                                : std::to_string(c.pending.size() - kHeader) + " of a message's " +
                                      std::to_string(decode_length(c.pending.data())) + " bytes";
    throw std::runtime_error(who + " closed in the middle of a message, after " + cut);
  }
  c.pending.append(buf, static_cast<std::size_t>(n));
  // Every whole frame now in `pending` is a message; what follows the last one waits for more.
  std::size_t at = 0;
  while (c.pending.size() - at >= kHeader) {
    const std::size_t len = decode_length(c.pending.data() + at);
    if (len > kMaxMessage)
      throw std::runtime_error(who + " sent a frame of " + std::to_string(len) +
                               " bytes: at most " + std::to_string(kMaxMessage) +
                               " are taken, so it is no frame of this queue's");
    if (c.pending.size() - at - kHeader < len) break;
    ready_.emplace_back(c.pending, at + kHeader, len);
    at += kHeader + len;
  }
  c.pending.erase(0, at);
  return true;
}

// ---- an actor ----------------------------------------------------------------------------------

Sender::Sender(const std::string& port_file, milliseconds wait) {
  // The writer is started at the same time as the actors: its port file may not be there yet.
  const auto deadline = Clock::now() + wait;
  for (;;) {
    std::ifstream in(port_file);
    if (in) {
      if (!(in >> port_) || port_ <= 0 || port_ > 65535)
        throw std::runtime_error("the writer's port file " + port_file + " holds no port");
      break;
    }
    if (Clock::now() >= deadline)
      throw std::runtime_error("no writer: its port file " + port_file + " did not appear in " +
                               seconds(wait));
    std::this_thread::sleep_for(milliseconds(5));
  }
  int local_port = 0;
  try {
    socket_ = loopback::connect_to(kLoopback, port_, local_port);
  } catch (const std::exception& e) {
    throw std::runtime_error("connecting to the writer on port " + std::to_string(port_) +
                             " (from " + port_file + "): " + e.what());
  }
}

void Sender::send(const std::string& message) {
  // Header and message in one buffer: one send, not a 4-byte segment held back by Nagle.
  const std::string f = frame(message);
  if (!socket_) throw std::runtime_error("send to the writer: this actor's end was closed");
  try {
    loopback::send_all(socket_, f);
  } catch (const std::exception& e) {
    throw std::runtime_error("send to the writer on port " + std::to_string(port_) + ": " +
                             e.what());
  }
}

}  // namespace fc::cases::record_queue
