// socket-handle-spawn (source 002): SubprocVecEnv was handed environment *instances* instead of
// factories, and each instance owned a live socket to the game host. What happens then depends on
// which pickler meets the socket, and both are shown here with real serializers
// (handle_serializers.h):
//   - cloudpickle (SB3's CloudpickleWrapper, under spawn or forkserver) walks the instance and
//     refuses the socket: "TypeError: cannot pickle 'socket' object", the source's error;
//   - multiprocessing's own pickler (a Process's arguments under spawn or forkserver) passes it as
//     a duplicate descriptor, so every worker talks on the parent's one connection; fork inherits
//     the descriptor, with the same result.
// Handing each worker a factory (host, port) fixes both: each connects its own socket.
//
// A loopback TCP server thread in the case's parent stands in for the game host; it answers each
// line "ask <worker> <n>" with "reply <worker> <n>" and records which workers each accepted
// connection served. Workers sharing a connection are not coordinated: whether a reply reaches
// a worker that did not ask is up to the scheduler, and is reported only when a worker read one.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <forkcheck/launch.h>
#include "cases/support/handle_serializers.h"
#include "cases/support/loopback.h"
#include "cases/support/os_handle.h"
#include "core/case_registry.h"
#include "core/pool.h"
#include "launch/process.h"

namespace {
namespace socket_handle_spawn {

using fc::Outcome;
using nlohmann::json;
namespace net = fc::cases::loopback;
namespace hp = fc::cases::handle_payload;
namespace osh = fc::cases::os_handle;

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

  // The instance as an object graph: plain fields and the socket's handle, for a serializer.
  json to_payload() const {
    return {{"type", "Env"},
            {"host", host_},
            {"port", port_},
            {"socket", hp::os_handle(socket_.get())}};
  }
  // An instance rebuilt from what a serializer delivered; it owns the handle in it.
  static std::unique_ptr<Env> from_payload(const json& p) {
    return std::unique_ptr<Env>(new Env(p.at("host").get<std::string>(), p.at("port").get<int>(),
                                        net::Socket(hp::handle_of(p.at("socket")))));
  }

  void ask(int worker, int k) { net::send_all(socket_, request(worker, k) + "\n"); }
  // One line, a byte at a time: never takes bytes past its own line's end, so readers sharing
  // the stream each end after their own count of lines (a line may still hold bytes of two).
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
  // What the OS says this instance's socket is ("fd 7, socket inode 1234"), and its local port.
  json describe() const {
    const osh::Info info = osh::inspect(socket_.get());
    return {{"socket", info.text},
            {"identity", info.identity},
            {"local_port", net::local_port_of(socket_)},
            {"connected_to", host_ + ":" + std::to_string(port_)}};
  }

 private:
  Env(std::string host, int port, net::Socket s)
      : host_(std::move(host)), port_(port), socket_(std::move(s)) {}

  std::string host_;
  int port_;
  int local_port_ = 0;
  net::Socket socket_;
};

// ---- workers --------------------------------------------------------------------------------

// An environment's steps: ask, then read the answer, as env.step() would. Nothing coordinates
// workers that share a connection.
json play(Env& env, int me) {
  json received = json::array();
  for (int k = 0; k < kAsks; ++k) {
    env.ask(me, k);
    received.push_back(env.read_line());
  }
  json r = env.describe();
  r["worker"] = me;
  r["pid"] = fc::launch::current_process_id();
  r["received"] = received;
  return r;
}

// spawn / forkserver: the instance as a serializer sent it; its socket redeemed here.
FORKCHECK_WORKER(env_received_worker) {
  auto env = Env::from_payload(hp::load(payload.at("instance")));
  return play(*env, payload.at("worker").get<int>());
}

// fork hands the worker the parent's object itself: the child's memory is a copy of the
// parent's, so this address is valid here, and the descriptor in it is inherited.
FORKCHECK_WORKER(env_inherited_worker) {
  Env& env = *reinterpret_cast<Env*>(payload.at("instance_at").get<std::uintptr_t>());
  return play(env, payload.at("worker").get<int>());
}

FORKCHECK_WORKER(env_factory_worker) {
  Env env(payload.at("host").get<std::string>(), payload.at("port").get<int>());
  const int me = payload.at("worker").get<int>();
  json r = play(env, me);
  for (int k = 0; k < kAsks; ++k) {
    const std::string got = r["received"][k].get<std::string>();
    if (got != "reply " + std::to_string(me) + " " + std::to_string(k))
      throw std::runtime_error("worker " + std::to_string(me) + " asked '" + Env::request(me, k) +
                               "' on its own connection and got '" + got + "'");
  }
  return r;
}

// ---- the case ---------------------------------------------------------------------------------

// The serializer a variant hands the instance (or the factory) to: spawn and forkserver must
// serialize; fork hands the object itself (nullptr).
std::unique_ptr<hp::Serializer> serializer_for(const fc::VariantSpec& variant) {
  if (variant.start_method == "fork") return nullptr;
  if (variant.name.find("dupfd") != std::string::npos) return std::make_unique<hp::DupFdReducer>();
  return std::make_unique<hp::RefusingSerializer>();
}

// Replies a worker read that answer another worker's request (or no request: bytes of several
// replies in one line), as the workers reported them.
json astray_replies(const json& workers) {
  json astray = json::array();
  for (const auto& w : workers) {
    if (!w.contains("result")) continue;
    const json& r = w["result"];
    const int me = r["worker"].get<int>();
    for (std::size_t k = 0; k < r["received"].size(); ++k) {
      const std::string line = r["received"][k].get<std::string>();
      int owner = -1, n = -1;
      char extra = 0;
      const bool parsed = std::sscanf(line.c_str(), "reply %d %d%c", &owner, &n, &extra) == 2;
      if (parsed && owner == me) continue;
      astray.push_back({{"worker", me},
                        {"pid", r["pid"]},
                        {"asked", Env::request(me, static_cast<int>(k))},
                        {"read", line},
                        {"meant_for", parsed ? json(owner) : json("no one: a garbled line")}});
    }
  }
  return astray;
}

// What the host and the workers saw of the connections: shared when one connection at the host
// served more than one worker. The outcome follows from that observation alone.
fc::CaseResult judge_sharing(fc::PoolResult pool, const json& parent, json details) {
  const json& conns = details["host_connections"];
  const std::string parents_peer =
      std::string(kLoopback) + ":" + std::to_string(parent["local_port"].get<int>());
  std::size_t most = 0;
  std::string served = "the host saw " + std::to_string(conns.size()) + " connection(s)";
  for (std::size_t i = 0; i < conns.size(); ++i) {
    const json& c = conns[i];
    most = std::max(most, c["workers"].size());
    served += (i == 0 ? ": " : "; ") + c["peer"].get<std::string>();
    if (c["peer"] == parents_peer)
      served += " (the parent's socket, " + parent["socket"].get<std::string>() + ")";
    served += " serving workers " + c["workers"].dump();
  }
  // Which workers held the parent's open socket, by the OS's identity of it (POSIX: the inode),
  // and under which descriptor numbers (their own, in each process).
  int on_parents = 0;
  std::set<std::string> fds;
  for (const auto& w : pool.workers) {
    const json& r = w["result"];
    const std::string text = r["socket"].get<std::string>();
    fds.insert(text.substr(0, text.find(',')));
    if (!parent["identity"].get<std::string>().empty() && r["identity"] == parent["identity"])
      ++on_parents;
  }
  const json astray = astray_replies(pool.workers);
  details["astray"] = astray;
  if (most <= 1) {
    pool.message = "not shared: " + served + ", one worker each";
    return fc::to_case_result(std::move(pool), details);
  }
  std::string msg = "shared: " + served;
  if (!parent["identity"].get<std::string>().empty()) {
    std::string as;
    for (const auto& fd : fds) as += (as.empty() ? "" : ", ") + fd;
    msg += "; " + std::to_string(on_parents) + " of " + std::to_string(pool.workers.size()) +
           " workers held that same socket (as " + as + " in their own process)";
  }
  if (astray.empty()) {
    msg += "; no reply went astray in this run";
  } else {
    const json& a = astray[0];
    std::size_t garbled = 0;
    for (const auto& x : astray) garbled += x["meant_for"].is_string() ? 1 : 0;
    msg += "; " + std::to_string(astray.size()) + " of " +
           std::to_string(pool.workers.size() * kAsks) + " replies went astray" +
           (garbled == 0 ? std::string()
                         : " (" + std::to_string(garbled) +
                               " of them lines of bytes from several replies)") +
           ": worker " + std::to_string(a["worker"].get<int>()) + " (pid " +
           std::to_string(a["pid"].get<int>()) + ") asked '" + a["asked"].get<std::string>() +
           "' and read '" + a["read"].get<std::string>() + "'";
  }
  pool.outcome = Outcome::kError;
  pool.message = msg;
  return fc::to_case_result(std::move(pool), details);
}

fc::CaseResult run_instance(const fc::VariantSpec& variant, GameHost& host, json details) {
  Env env(kLoopback, host.port());
  const json parent = env.describe();
  details["parent_socket"] = parent;
  const bool fork = variant.start_method == "fork";
  std::unique_ptr<hp::Serializer> serializer = serializer_for(variant);
  details["serializer"] = serializer ? serializer->name() : "none: fork hands the object itself";
  std::vector<json> payloads;
  try {
    for (int i = 0; i < kWorkers; ++i) {
      json p = fork ? json{{"instance_at", reinterpret_cast<std::uintptr_t>(&env)}}
                    : json{{"instance", serializer->dump(env.to_payload())}};
      p["worker"] = i;
      payloads.push_back(std::move(p));
    }
  } catch (const fc::launch::NotSerializable& e) {
    details["refused_by"] = serializer->name();
    return {Outcome::kError,
            "the " + serializer->name() + " serializer refused the Env instance for a " +
                variant.start_method + " worker: " + e.what(),
            details};
  }
  auto workers =
      fc::start_pool(variant, fork ? "env_inherited_worker" : "env_received_worker", payloads);
  fc::PoolResult pool = fc::join_pool(workers, std::chrono::seconds(10));
  details["host_connections"] = host.stop();
  if (auto* reducer = dynamic_cast<hp::DupFdReducer*>(serializer.get()))
    details["descriptors_redeemed"] = reducer->redeemed();
  if (pool.outcome != Outcome::kOk) return fc::to_case_result(std::move(pool), details);
  return judge_sharing(std::move(pool), parent, details);
}

fc::CaseResult run_factory(const fc::VariantSpec& variant, GameHost& host, json details) {
  std::unique_ptr<hp::Serializer> serializer = serializer_for(variant);
  details["serializer"] = serializer ? serializer->name() : "none: fork hands the object itself";
  std::vector<json> payloads;
  for (int i = 0; i < kWorkers; ++i) {
    const json factory = {{"host", kLoopback}, {"port", host.port()}, {"worker", i}};
    payloads.push_back(serializer ? serializer->dump(factory) : factory);
  }
  auto workers = fc::start_pool(variant, "env_factory_worker", payloads);
  fc::PoolResult pool = fc::join_pool(workers, std::chrono::seconds(10));
  details["host_connections"] = host.stop();
  if (pool.outcome != Outcome::kOk) return fc::to_case_result(std::move(pool), details);
  const auto& conns = details["host_connections"];
  bool one_each = conns.size() == kWorkers;
  for (const auto& c : conns) one_each = one_each && c["workers"].size() == 1;
  if (!one_each) {
    pool.outcome = Outcome::kError;
    pool.message = "not one connection per worker at the host: " + conns.dump();
  } else {
    pool.message = "each of the " + std::to_string(kWorkers) +
                   " workers connected its own socket (the host saw " +
                   std::to_string(conns.size()) +
                   " connections, one worker each) and every reply reached the worker that asked";
  }
  return fc::to_case_result(std::move(pool), details);
}

fc::CaseResult run(const fc::VariantSpec& variant) {
  GameHost host;
  json details = {{"host", std::string(kLoopback) + ":" + std::to_string(host.port())},
                  {"workers", kWorkers},
                  {"asks_per_worker", kAsks}};
  const bool factory = variant.name.find("factory") != std::string::npos;
  return factory ? run_factory(variant, host, details) : run_instance(variant, host, details);
}

std::vector<fc::VariantSpec> variants() {
  const char* refused =
      "the cloudpickle-like serializer walks the instance and refuses the OS handle it finds, "
      "as pickle and cloudpickle refuse a socket (Python 3.11 here: pickle.dumps(socket) raises "
      "TypeError: cannot pickle 'socket' object; SB3's CloudpickleWrapper reaches it under spawn "
      "and forkserver, where Process arguments are pickled)";
  const char* passed =
      "multiprocessing-like reducer: each worker redeems a ticket for a duplicate of the parent's "
      "socket descriptor (SCM_RIGHTS), so all talk on one TCP connection; decided by what the "
      "host sees: one connection serving several workers (Python 3.11 multiprocessing on this "
      "machine: the same, one connection at the server for 4 workers). Whether a reply also "
      "reaches a worker that did not ask is up to the scheduler and only reported";
  const char* what =
      "4 workers are handed one Env instance (one connected socket) and each asks "
      "twice, ask then read, uncoordinated";
  std::vector<fc::VariantSpec> v = {
      fc::hazard("spawn-cloudpickle", "spawn", Outcome::kError, refused,
                 "the Env instance serialized for spawn workers by the cloudpickle-like "
                 "serializer (SB3's CloudpickleWrapper)"),
      fc::hazard("forkserver-cloudpickle", "forkserver", Outcome::kError, refused,
                 "the same for forkserver workers (SB3's default start method where it exists)"),
      fc::hazard("spawn-dupfd", "spawn", Outcome::kError, passed,
                 std::string(what) + "; spawn, multiprocessing-like reducer"),
      fc::hazard("forkserver-dupfd", "forkserver", Outcome::kError, passed,
                 std::string(what) + "; forkserver, multiprocessing-like reducer"),
      fc::hazard("fork-instance", "fork", Outcome::kError,
                 "fork copies the instance with its open descriptor: every worker inherits the "
                 "parent's connection, and the host sees one connection serving several workers; "
                 "replies going astray are only reported",
                 std::string(what) + "; fork, no serialization"),
      fc::fix("spawn-factory", "spawn",
              "a factory (host, port) holds no handle: the same cloudpickle-like serializer "
              "passes it, and each worker connects its own socket",
              "4 spawn workers are handed (host, port) and each creates its own Env"),
      fc::fix("forkserver-factory", "forkserver",
              "a factory (host, port) holds no handle: the same cloudpickle-like serializer "
              "passes it, and each worker connects its own socket",
              "4 forkserver workers are handed (host, port) and each creates its own Env"),
      fc::fix("fork-factory", "fork",
              "with a factory even fork is fine: no connection exists before the workers do",
              "4 fork workers are handed (host, port) and each creates its own Env"),
  };
  if (const char* why = osh::sharing_unavailable_reason())
    for (auto& s : v)
      if (s.name.find("dupfd") != std::string::npos) s.skip(why);
  return v;
}

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
      "while SB3's CloudpickleWrapper pickled an instance (which held a connection) for a worker.";
  c.mechanism =
      "Under spawn and forkserver what a worker is given must be serialized. A plain pickler "
      "(pickle, cloudpickle: SB3 wraps each env with cloudpickle) refuses an OS handle. "
      "multiprocessing's own pickler does not: it registers a reducer for sockets that hands the "
      "worker a duplicate descriptor (SCM_RIGHTS on POSIX), so the worker holds the parent's "
      "connection. fork inherits the descriptor, the same sharing without any serializer. One TCP "
      "stream then has several readers, and a reply goes to whichever reads first.";
  c.platforms =
      "any (the refusal: everywhere; the duplicated socket: POSIX here, Windows' multiprocessing "
      "uses WSADuplicateSocket; the inherited socket under fork: POSIX)";
  c.variants = &variants;
  c.run = &run;
  c.explains = {
      {"cannot pickle 'socket' object",
       "a live socket was handed to a worker: hand it a factory, and let each worker connect its "
       "own"},
  };
  // What in the environment may explain a change of its outcome (forkcheck diff).
  c.environment_topics = {"os", "kernel", "start-methods"};
  return c;
}

}  // namespace socket_handle_spawn
}  // namespace
