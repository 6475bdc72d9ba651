// selfplay-pipeline's queue (repros/cases/support/record_queue.h) under the faults it has to
// survive or report: several actors at once with big messages, an actor started before the writer,
// an actor whose writer never comes, a writer that hears nothing, a connection that drops
// mid-frame, a writer that goes away. Actors are threads here; tests/win32/record_queue_smoke.cc
// runs them as processes on Windows.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cases/support/loopback.h"
#include "cases/support/record_queue.h"
#include "launch/process.h"
#include "record_queue_check.h"

namespace {

namespace fs = std::filesystem;
namespace rq = fc::cases::record_queue;
using rq::testing::Clock;
using rq::testing::drain;
using rq::testing::message;
using rq::testing::since;
using std::chrono::milliseconds;

// Runs `body` on a thread; what it threw, as text, once joined ("" when nothing).
class Actor {
 public:
  explicit Actor(std::function<void()> body)
      : thread_([this, body = std::move(body)] {
          try {
            body();
          } catch (const std::exception& e) {
            error_ = e.what();
          }
        }) {}
  ~Actor() {
    if (thread_.joinable()) thread_.join();
  }
  std::string join() {
    thread_.join();
    return error_;
  }

 private:
  std::string error_;
  std::thread thread_;
};

class RecordQueue : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    dir_ = fs::temp_directory_path() /
           ("forkcheck-record-queue-" + std::to_string(fc::launch::current_process_id()) + "-" +
            std::to_string(++n));
    fs::remove_all(dir_);
    fs::create_directory(dir_);
    port_file_ = (dir_ / "queue.port").string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path dir_;
  std::string port_file_;
};

TEST_F(RecordQueue, ManyActorsBigMessagesArriveWholeAndInOrder) {
  constexpr int kActors = 4, kMessages = 30;
  std::vector<std::unique_ptr<Actor>> actors;
  for (int a = 0; a < kActors; ++a)
    actors.push_back(std::make_unique<Actor>([this, a] {
      rq::Sender s(port_file_);
      for (int k = 0; k < kMessages; ++k) s.send(message(a, k));
    }));
  rq::Writer w(port_file_, kActors, std::chrono::seconds(20));
  std::vector<std::string> got;
  EXPECT_EQ(drain(w, got), "");
  for (auto& a : actors) EXPECT_EQ(a->join(), "");

  ASSERT_EQ(got.size(), static_cast<std::size_t>(kActors * kMessages));
  std::vector<int> next_k(kActors, 0);
  for (const std::string& m : got) {
    int a = -1, k = -1;
    std::istringstream(m) >> a >> k;
    ASSERT_TRUE(a >= 0 && a < kActors) << m.substr(0, 40);
    EXPECT_EQ(k, next_k[a]) << "actor " << a << "'s messages out of order";
    EXPECT_TRUE(m == message(a, k)) << "message " << a << "/" << k << " arrived changed ("
                                    << m.size() << " bytes, sent " << message(a, k).size() << ")";
    next_k[a] = k + 1;
  }
  EXPECT_EQ(w.connections(), kActors);
  EXPECT_EQ(w.ends(), kActors);
}

TEST_F(RecordQueue, ThePortFileIsWholeAndGoesWithTheWriter) {
  {
    rq::Writer w(port_file_, 1);
    std::ifstream in(port_file_);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, std::to_string(w.port()) + "\n");
    EXPECT_FALSE(fs::exists(port_file_ + ".tmp")) << "the file written aside was renamed";
  }
  EXPECT_FALSE(fs::exists(port_file_));
}

TEST_F(RecordQueue, AnActorStartedBeforeTheWriterWaitsForIt) {
  const auto t0 = Clock::now();
  double connected_after = 0;
  Actor actor([&] {
    rq::Sender s(port_file_, milliseconds(10000));
    connected_after = since(t0);
    s.send("hello");
  });
  std::this_thread::sleep_for(milliseconds(300));
  ASSERT_FALSE(fs::exists(port_file_));
  rq::Writer w(port_file_, 1, std::chrono::seconds(10));
  std::vector<std::string> got;
  EXPECT_EQ(drain(w, got), "");
  EXPECT_EQ(actor.join(), "");
  EXPECT_EQ(got, std::vector<std::string>{"hello"});
  EXPECT_GE(connected_after, 0.29) << "it connected once the writer was there";
}

TEST_F(RecordQueue, AnActorWithoutAWriterGivesUpAtItsDeadline) {
  const auto t0 = Clock::now();
  std::string error;
  try {
    rq::Sender s(port_file_, milliseconds(300));
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  const double s = since(t0);
  EXPECT_NE(error.find("no writer"), std::string::npos) << error;
  EXPECT_NE(error.find(port_file_), std::string::npos) << error;
  EXPECT_NE(error.find("0.3 s"), std::string::npos) << error;
  EXPECT_GE(s, 0.29);
  EXPECT_LT(s, 5.0);
}

TEST_F(RecordQueue, TheWriterHearingNothingSaysHowManyEndsItGot) {
  rq::Writer w(port_file_, 3, milliseconds(300));
  Actor done([&] { rq::Sender(port_file_).send("only message"); });  // connects, sends, ends
  std::atomic<bool> release{false};
  Actor silent([&] {  // connects and says nothing until the writer gave up
    rq::Sender s(port_file_);
    while (!release) std::this_thread::sleep_for(milliseconds(5));
  });
  std::vector<std::string> got;
  const auto t0 = Clock::now();
  const std::string error = drain(w, got);
  const double s = since(t0);
  release = true;
  EXPECT_EQ(done.join(), "");
  EXPECT_EQ(silent.join(), "");
  EXPECT_EQ(got, std::vector<std::string>{"only message"});
  EXPECT_NE(error.find("heard nothing for 0.3 s"), std::string::npos) << error;
  EXPECT_NE(error.find("ends from 1 of 3 actors (2 connected)"), std::string::npos) << error;
  EXPECT_LT(s, 5.0);
}

// A raw connection to the writer that sends `bytes` and closes: an actor dying mid-send.
void send_raw_and_close(int port, const std::string& bytes) {
  int local = 0;
  fc::cases::loopback::Socket s = fc::cases::loopback::connect_to("127.0.0.1", port, local);
  fc::cases::loopback::send_all(s, bytes);
}

TEST_F(RecordQueue, AConnectionDroppedMidFrameIsAnError) {
  // Cut in the message, and cut in the header: each an error at once, never a finished queue.
  const std::string whole = rq::frame(std::string(1000, 'x'));
  struct Cut {
    std::size_t bytes;
    const char* says;
  };
  for (const Cut& cut : {Cut{504, "after 500 of a message's 1000 bytes"},
                         Cut{2, "after 2 bytes of a frame's header"}}) {
    rq::Writer w(port_file_, 1, std::chrono::seconds(10));
    Actor actor([&] {
      send_raw_and_close(w.port(), rq::frame("a whole one") + whole.substr(0, cut.bytes));
    });
    std::vector<std::string> got;
    const auto t0 = Clock::now();
    const std::string error = drain(w, got);
    EXPECT_EQ(actor.join(), "");
    EXPECT_NE(error.find("closed in the middle of a message"), std::string::npos) << error;
    EXPECT_NE(error.find(cut.says), std::string::npos) << error;
    EXPECT_EQ(got, std::vector<std::string>{"a whole one"});
    EXPECT_EQ(w.ends(), 0);
    EXPECT_LT(since(t0), 5.0) << "at once, not at the writer's 10 s of silence";
  }
}

TEST_F(RecordQueue, AFrameLargerThanTheLimitIsRejected) {
  rq::Writer w(port_file_, 1, std::chrono::seconds(10));
  Actor actor([&] { send_raw_and_close(w.port(), std::string(4, '\xff') + "garbage"); });
  std::vector<std::string> got;
  const std::string error = drain(w, got);
  EXPECT_EQ(actor.join(), "");
  EXPECT_NE(error.find("no frame of this queue's"), std::string::npos) << error;
  EXPECT_THROW(rq::frame(std::string(rq::kMaxMessage + 1, 'x')), std::runtime_error);
}

TEST_F(RecordQueue, SendingToAWriterThatWentAwayIsAnError) {
  std::unique_ptr<rq::Writer> w = std::make_unique<rq::Writer>(port_file_, 1);
  rq::Sender s(port_file_);
  s.send("before");
  w.reset();  // its listener, and the connection waiting in its backlog, are closed
  // The first sends may still fit in this end's buffer; one must fail, with an error, not a signal.
  std::string error;
  const std::string big(1u << 20, 'x');
  for (int i = 0; i < 64 && error.empty(); ++i) {
    try {
      s.send(big);
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
  }
  EXPECT_NE(error.find("send to the writer"), std::string::npos) << error;
}

}  // namespace
