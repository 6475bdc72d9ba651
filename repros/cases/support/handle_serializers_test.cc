// socket-handle-spawn's two serializers (repros/cases/support/handle_serializers.h) on real
// descriptors: the cloudpickle-like one passes plain data and refuses a handle by what the OS says
// it is; the multiprocessing-like reducer hands out a duplicate of the same open socket, once per
// ticket.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <forkcheck/launch.h>
#include "cases/support/handle_serializers.h"

namespace {

using nlohmann::json;
namespace hp = fc::cases::handle_payload;

struct Pair {
  int fd[2] = {-1, -1};
  Pair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~Pair() {
    for (int f : fd) ::close(f);
  }
};

struct stat stat_of(int fd) {
  struct stat st {};
  EXPECT_EQ(::fstat(fd, &st), 0);
  return st;
}

std::string refusal(const json& payload) {
  hp::RefusingSerializer s;
  try {
    s.dump(payload);
  } catch (const fc::launch::NotSerializable& e) {
    return e.what();
  }
  return "no refusal";
}

TEST(RefusingSerializer, PassesAPayloadWithoutHandles) {
  const json factory = {
      {"host", "127.0.0.1"}, {"port", 4100}, {"envs", {1, {{"a", "b"}}, nullptr}}};
  hp::RefusingSerializer s;
  EXPECT_EQ(s.dump(factory), factory);
}

TEST(RefusingSerializer, NamesTheSocketItFoundAndWhere) {
  Pair p;
  const std::string why =
      refusal({{"type", "Env"}, {"envs", {0, {{"socket", hp::os_handle(p.fd[0])}}}}});
  EXPECT_EQ(why.rfind("cannot serialize 'socket' object (fd " + std::to_string(p.fd[0]) +
                          ", socket inode " + std::to_string(stat_of(p.fd[0]).st_ino) +
                          ", at payload.envs[1].socket)",
                      0),
            0u)
      << why;
}

TEST(RefusingSerializer, NamesAPipeAndAFileAsWhatTheyAre) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  EXPECT_NE(refusal({{"out", hp::os_handle(pipe_fds[1])}})
                .find("cannot serialize 'pipe' object (fd " + std::to_string(pipe_fds[1])),
            std::string::npos);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  const int file = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(file, 0);
  EXPECT_NE(refusal({{"log", hp::os_handle(file)}}).find("'character device' object"),
            std::string::npos);
  ::close(file);
}

TEST(DupFdReducer, TheWorkerGetsADuplicateOfTheSameSocket) {
  Pair p;
  hp::DupFdReducer reducer;
  const json wire = reducer.dump({{"host", "h"}, {"socket", hp::os_handle(p.fd[0])}});
  EXPECT_EQ(wire["host"], "h");
  EXPECT_FALSE(hp::is_os_handle(wire["socket"])) << wire;  // no bare fd number travels
  const json loaded = hp::load(wire);
  const int received = static_cast<int>(hp::handle_of(loaded["socket"]));
  EXPECT_NE(received, p.fd[0]);
  const struct stat mine = stat_of(p.fd[0]), theirs = stat_of(received);
  EXPECT_EQ(theirs.st_dev, mine.st_dev);
  EXPECT_EQ(theirs.st_ino, mine.st_ino);  // the same open socket, not a copy of its address
  EXPECT_EQ(reducer.redeemed(), 1);
  // The same connection: what goes in through the duplicate comes out at the original's peer.
  ASSERT_EQ(::write(received, "hi", 2), 2);
  char buf[2];
  ASSERT_EQ(::read(p.fd[1], buf, 2), 2);
  EXPECT_EQ(std::string(buf, 2), "hi");
  EXPECT_EQ(::fcntl(received, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  ::close(received);
}

TEST(DupFdReducer, ATicketIsGoodOnce) {
  Pair p;
  hp::DupFdReducer reducer;
  const json wire = reducer.dump({{"socket", hp::os_handle(p.fd[0])}});
  ::close(static_cast<int>(hp::handle_of(hp::load(wire)["socket"])));
  try {
    hp::load(wire);
    ADD_FAILURE() << "a second redemption succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("knows no ticket"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("at payload.socket"), std::string::npos) << e.what();
  }
  EXPECT_EQ(reducer.redeemed(), 1);
}

TEST(DupFdReducer, EachDumpIsItsOwnDuplicate) {
  Pair p;
  hp::DupFdReducer reducer;
  const json a = hp::load(reducer.dump({{"s", hp::os_handle(p.fd[0])}}));
  const json b = hp::load(reducer.dump({{"s", hp::os_handle(p.fd[0])}}));
  const int fa = static_cast<int>(hp::handle_of(a["s"])),
            fb = static_cast<int>(hp::handle_of(b["s"]));
  EXPECT_NE(fa, fb);
  EXPECT_EQ(stat_of(fa).st_ino, stat_of(fb).st_ino);
  EXPECT_EQ(reducer.redeemed(), 2);
  ::close(fa);
  ::close(fb);
}

}  // namespace
