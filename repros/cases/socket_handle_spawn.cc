// socket-handle-spawn (source 002): SubprocVecEnv was handed environment *instances* instead of
// factories, and each instance owned a live socket to the game host. Under spawn the instance
// must be serialized to reach the worker, and a socket cannot be: "TypeError: cannot pickle
// 'socket' object". Under fork nothing complains: every worker inherits the same connection, and
// the byte stream has no notion of which worker asked, so replies go to whoever reads next.
// Handing each worker a factory (host, port) fixes both: each connects its own socket.
//
// A loopback TCP server thread in the case's parent stands in for the game host; it answers each
// line "ask <worker> <n>" with "reply <worker> <n>" and records which workers each accepted
// connection served.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cases/loopback.h"
#include "core/case_registry.h"
#include "core/pool.h"
#include "launch/launch.h"
#include "launch/process.h"

namespace {

using fc::Outcome;
using nlohmann::json;
namespace net = fc::cases::loopback;

constexpr int kWorkers = 4;
constexpr int kAsks = 2;  // requests per worker
constexpr const char* kLoopback = "127.0.0.1";
// How often the host's thread looks at its stop flag while no socket has anything to say.
constexpr int kHostTickMs = 20;

// ---- the game host ---------------------------------------------------------------------------

class GameHost {
 public:
  struct Connection {
    std::string peer;
    int requests = 0;
    std::set<int> workers;  // whose requests came on this connection
  };

  GameHost() : listener_(net::listen_on_loopback(port_)) {
    thread_ = std::thread([this] { serve(); });
  }
  ~GameHost() { stop(); }
  GameHost(const GameHost&) = delete;
  GameHost& operator=(const GameHost&) = delete;

  int port() const { return port_; }

  // Stops serving; what each connection saw.
  json stop() {
    if (thread_.joinable()) {
      stop_ = true;
      thread_.join();
    }
    json out = json::array();
    for (const auto& c : conns_)
      out.push_back({{"peer", c.peer}, {"requests", c.requests}, {"workers", c.workers}});
    return out;
  }

 private:
  struct Live {
    net::Socket socket;
    size_t conn = 0;
    std::string buf;
    bool closed = false;
  };

  void serve() {
    std::vector<Live> live;
    while (!stop_) {
      std::vector<const net::Socket*> sockets = {&listener_};
      for (const auto& l : live) sockets.push_back(&l.socket);
      const std::vector<bool> ready = net::wait_readable(sockets, kHostTickMs);
      for (size_t i = 0; i < live.size(); ++i)
        if (ready[i + 1]) answer(live[i]);
      for (auto it = live.begin(); it != live.end();) {
        if (it->closed) {
          it = live.erase(it);
        } else {
          ++it;
        }
      }
      if (ready[0]) {
        int peer_port = 0;
        net::Socket s = net::accept_connection(listener_, peer_port);
        if (!s) continue;
        Connection c;
        c.peer = std::string(kLoopback) + ":" + std::to_string(peer_port);
        conns_.push_back(c);
        Live l;
        l.socket = std::move(s);
        l.conn = conns_.size() - 1;
        live.push_back(std::move(l));
      }
    }
  }

  void answer(Live& l) {
    char b[512];
    const long n = net::receive(l.socket, b, sizeof b);
    if (n <= 0) {
      l.closed = true;
      return;
    }
    l.buf.append(b, static_cast<size_t>(n));
    for (size_t nl; (nl = l.buf.find('\n')) != std::string::npos;) {
      const std::string line = l.buf.substr(0, nl);
      l.buf.erase(0, nl + 1);
      int worker = -1, k = -1;
      if (std::sscanf(line.c_str(), "ask %d %d", &worker, &k) != 2) continue;
      conns_[l.conn].requests += 1;
      conns_[l.conn].workers.insert(worker);
      try {
        net::send_all(l.socket, "reply " + std::to_string(worker) + " " + std::to_string(k) + "\n");
      } catch (const std::exception&) {
        l.closed = true;
      }
    }
  }

  int port_ = 0;
  net::Socket listener_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<Connection> conns_;  // the serving thread's until stop() joined it
};

// ---- the environment ----------------------------------------------------------------------

// The source's environment class: its instance owns a live connection to the game host.
class Env {
 public:
  Env(const std::string& host, int port)
      : host_(host), port_(port), socket_(net::connect_to(host, port, local_port_)) {}
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  void ask(int worker, int k) { net::send_all(socket_, request(worker, k) + "\n"); }
  // One line, a byte at a time: never takes bytes that belong to the next line (or reader).
  std::string read_line() {
    std::string line;
    for (char c;;) {
      const long n = net::receive(socket_, &c, 1);
      if (n < 0) throw std::runtime_error("recv: " + net::last_error());
      if (n == 0) throw std::runtime_error("the game host closed the connection");
      if (c == '\n') return line;
      line += c;
    }
  }
  static std::string request(int worker, int k) {
    return "ask " + std::to_string(worker) + " " + std::to_string(k);
  }
  std::string describe() const {
    return socket_.describe() + ", connected to " + host_ + ":" + std::to_string(port_);
  }
  int local_port() const { return local_port_; }

 private:
  std::string host_;
  int port_;
  int local_port_ = 0;
  net::Socket socket_;
};

// What serializing an instance for a fresh process comes to (Python: socket.__getstate__).
void to_json(json&, const Env& env) {
  throw fc::launch::NotSerializable(
      "cannot serialize 'socket' object (" + env.describe() +
      "): an Env instance owns a live "
      "connection, which cannot travel to a fresh process; hand the worker a factory (host, "
      "port) and let it connect");
}

// ---- workers --------------------------------------------------------------------------------

// Fork workers sharing one connection take turns (in shared memory) so the run is the same every
// time: they send in order 0..N-1, then read in order N-1..0, one of the orders the OS may pick.
struct Turns {
  std::atomic<int> send{0};
  std::atomic<int> read{0};
};

void wait_turn(const std::atomic<int>& turn, int mine) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (turn.load() != mine) {
    if (std::chrono::steady_clock::now() > until)
      throw std::runtime_error("gave up waiting for turn " + std::to_string(mine));
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

json result_of(int me, const Env& env, const json& received) {
  return {{"worker", me},
          {"pid", fc::launch::current_process_id()},
          {"socket", env.describe()},
          {"local_port", env.local_port()},
          {"received", received}};
}

FORKCHECK_WORKER(env_instance_worker) {
  // fork hands the worker the parent's objects themselves: the child's memory is a copy of the
  // parent's, so these addresses are valid here.
  Env& env = *reinterpret_cast<Env*>(payload.at("instance_at").get<std::uintptr_t>());
  Turns& turns = *reinterpret_cast<Turns*>(payload.at("turns_at").get<std::uintptr_t>());
  const int me = payload.at("worker").get<int>();
  wait_turn(turns.send, me);
  for (int k = 0; k < kAsks; ++k) env.ask(me, k);
  turns.send += 1;
  wait_turn(turns.read, kWorkers - 1 - me);
  json received = json::array();
  for (int k = 0; k < kAsks; ++k) received.push_back(env.read_line());
  turns.read += 1;
  return result_of(me, env, received);
}

FORKCHECK_WORKER(env_factory_worker) {
  Env env(payload.at("host").get<std::string>(), payload.at("port").get<int>());
  const int me = payload.at("worker").get<int>();
  json received = json::array();
  for (int k = 0; k < kAsks; ++k) {
    env.ask(me, k);
    received.push_back(env.read_line());
    if (received.back() != "reply " + std::to_string(me) + " " + std::to_string(k))
      throw std::runtime_error("worker " + std::to_string(me) + " asked '" + Env::request(me, k) +
                               "' and got '" + received.back().get<std::string>() + "'");
  }
  return result_of(me, env, received);
}

// ---- the case ---------------------------------------------------------------------------------

// How an instance travels, as in Python: fork hands the child the object itself; spawn and
// forkserver must serialize it (to_json above).
json hand_instance(const fc::VariantSpec& variant, const Env& env) {
  if (variant.start_method == "fork")
    return {{"instance_at", reinterpret_cast<std::uintptr_t>(&env)}};
  return {{"instance", env}};
}

// Which replies reached a worker other than the one that asked.
std::string crossed_replies(const json& workers, json& crossed) {
  std::string first;
  for (const auto& w : workers) {
    if (!w.contains("result")) continue;
    const int me = w["result"]["worker"].get<int>();
    std::set<int> owners;
    std::string lines;
    for (const auto& line : w["result"]["received"]) {
      int owner = -1, k = -1;
      if (std::sscanf(line.get<std::string>().c_str(), "reply %d %d", &owner, &k) != 2 ||
          owner == me)
        continue;
      owners.insert(owner);
      lines += (lines.empty() ? "" : ", ") + line.get<std::string>();
    }
    if (owners.empty()) continue;
    crossed.push_back({{"worker", me},
                       {"pid", w["pid"]},
                       {"meant_for", owners},
                       {"received", w["result"]["received"]}});
    if (first.empty())
      first = "worker " + std::to_string(me) + " (pid " + std::to_string(w["pid"].get<int>()) +
              ") received replies meant for worker " + std::to_string(*owners.begin()) + ": " +
              lines;
  }
  return first;
}

fc::CaseResult run_instance(const fc::VariantSpec& variant, GameHost& host, json details) {
  Env env(kLoopback, host.port());
  details["instance_socket"] = env.describe();
  std::vector<json> payloads;
  try {
    for (int i = 0; i < kWorkers; ++i) {
      json p = hand_instance(variant, env);
      p["worker"] = i;
      payloads.push_back(std::move(p));
    }
  } catch (const fc::launch::NotSerializable& e) {
    details["refused_when"] =
        "serializing the Env instance for a " + variant.start_method + " worker";
    return {Outcome::kError, e.what(), details};
  }
  // Only fork gets here (the others refused above): its workers take turns through memory they
  // share with the parent, unmapped on every path out.
  std::unique_ptr<void, void (*)(void*)> shared(
      fc::launch::map_fork_shared(sizeof(Turns)),
      [](void* p) { fc::launch::unmap_fork_shared(p, sizeof(Turns)); });
  auto* turns = new (shared.get()) Turns();
  for (auto& p : payloads) p["turns_at"] = reinterpret_cast<std::uintptr_t>(turns);
  auto workers = fc::start_pool(variant, "env_instance_worker", payloads);
  fc::PoolResult pool = fc::join_pool(workers, std::chrono::seconds(10));
  details["host_connections"] = host.stop();
  if (pool.outcome != Outcome::kOk) return fc::to_case_result(std::move(pool), details);
  json crossed = json::array();
  const std::string first = crossed_replies(pool.workers, crossed);
  details["crossed"] = crossed;
  std::set<int> local_ports;  // one value: every worker used the same connection
  for (const auto& w : pool.workers) local_ports.insert(w["result"]["local_port"].get<int>());
  details["worker_local_ports"] = local_ports;
  const auto& conns = details["host_connections"];
  const std::string served = "the host saw " + std::to_string(conns.size()) +
                             " connection(s), the first serving workers " +
                             (conns.empty() ? std::string("none") : conns[0]["workers"].dump()) +
                             "; the workers' local ports: " + details["worker_local_ports"].dump();
  if (first.empty()) {
    pool.message = "no reply crossed, though all workers shared " + env.describe() + "; " + served;
    return fc::to_case_result(std::move(pool), details);
  }
  pool.outcome = Outcome::kError;
  pool.message = "replies crossed on the one inherited socket (" + env.describe() + "): " + first +
                 " (" + std::to_string(crossed.size()) + " of " + std::to_string(kWorkers) +
                 " workers got others' replies); " + served;
  return fc::to_case_result(std::move(pool), details);
}

fc::CaseResult run_factory(const fc::VariantSpec& variant, GameHost& host, json details) {
  std::vector<json> payloads;
  for (int i = 0; i < kWorkers; ++i)
    payloads.push_back({{"host", kLoopback}, {"port", host.port()}, {"worker", i}});
  auto workers = fc::start_pool(variant, "env_factory_worker", payloads);
  fc::PoolResult pool = fc::join_pool(workers, std::chrono::seconds(10));
  details["host_connections"] = host.stop();
  if (pool.outcome != Outcome::kOk) return fc::to_case_result(std::move(pool), details);
  const auto& conns = details["host_connections"];
  bool one_each = conns.size() == kWorkers;
  for (const auto& c : conns) one_each = one_each && c["workers"].size() == 1;
  if (!one_each) {
    pool.outcome = Outcome::kError;
    pool.message = "expected one connection per worker at the host, saw " + conns.dump();
  } else {
    pool.message = "each of the " + std::to_string(kWorkers) +
                   " workers connected its own socket "
                   "(the host saw " +
                   std::to_string(conns.size()) +
                   " connections, one worker "
                   "each) and every reply reached the worker that asked";
  }
  return fc::to_case_result(std::move(pool), details);
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  GameHost host;
  json details = {{"host", std::string(kLoopback) + ":" + std::to_string(host.port())},
                  {"workers", kWorkers},
                  {"asks_per_worker", kAsks}};
  const bool instance = variant.name.find("instance") != std::string::npos;
  return instance ? run_instance(variant, host, details) : run_factory(variant, host, details);
}

std::vector<fc::VariantSpec> variants() {
  const char* refused =
      "the worker is a fresh process: the instance must be serialized to reach it, and its live "
      "socket cannot be (Python: TypeError: cannot pickle 'socket' object)";
  return {
      fc::hazard(
          "fork-instance", "fork", Outcome::kError,
          "fork copies the instance with its open socket: all workers share one "
          "connection, and a reply goes to whichever worker reads next (the workers send "
          "in turn 0..3 and read in turn 3..0, so it is the same every run)",
          "4 workers are handed one Env instance (one connected socket) and each asks twice"),
      fc::hazard("spawn-instance", "spawn", Outcome::kError, refused,
                 "the same instance handed to spawn workers"),
      fc::hazard("forkserver-instance", "forkserver", Outcome::kError, refused,
                 "the same instance handed to forkserver workers"),
      fc::fix("spawn-factory", "spawn",
              "a factory (host, port) serializes; each worker connects its own socket",
              "4 spawn workers are handed (host, port) and each creates its own Env"),
      fc::fix("forkserver-factory", "forkserver",
              "a factory (host, port) serializes; each worker connects its own socket",
              "4 forkserver workers are handed (host, port) and each creates its own Env"),
      fc::fix("fork-factory", "fork",
              "with a factory even fork is fine: no connection exists before the workers do",
              "4 fork workers are handed (host, port) and each creates its own Env"),
  };
}

}  // namespace

FORKCHECK_CASE(socket_handle_spawn_case) {
  fc::CaseDef c;
  c.id = "socket-handle-spawn";
  c.title = "An environment instance with a live socket handed to workers";
  c.source_title = "untitled: 需要用到SubprocVecEnv并行采样 (section 多进程时复制)";
  c.source_author = "not named (its traceback's home directory is /home/illya)";
  c.source_doc = "002";
  c.reported =
      "SubprocVecEnv([self.env_cls(i) for i in range(n_envs)]) handed instances instead of "
      "callables: \"TypeError: cannot pickle 'socket' object\", raised from socket.__getstate__ "
      "while sending an instance (which held a connection) to a worker.";
  c.mechanism =
      "spawn and forkserver serialize what the worker is given; an OS handle (a connected "
      "socket) has no meaning in another process and refuses to serialize. fork copies the "
      "process instead, so the socket's file description is silently shared by every worker: "
      "one TCP stream, N readers, replies delivered to whoever reads first.";
  c.platforms = "any (spawn: everywhere; the shared socket under fork: POSIX)";
  c.variants = &variants;
  c.run = &run;
  return c;
}
