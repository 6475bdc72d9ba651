// Which torch a Python would import (harness/python_facts/python_torch.h): torch/version.py as
// wheels and distributions write it, parsed without Python; and an interpreter that has no torch,
// or is not there at all.
#include <string>

#include <gtest/gtest.h>

#include "harness/python_facts/python_torch.h"

namespace fc::harness {
namespace {

TEST(PythonTorch, VersionPyAsWheelsAndDistributionsWriteIt) {
  // A CUDA wheel (2.x annotates its names), then Debian's python3-torch.
  const auto wheel = parse_torch_version_py(
      "from typing import Optional\n"
      "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
      "__version__ = '2.3.0+cu121'\n"
      "debug = False\n"
      "cuda: Optional[str] = '12.1'\n"
      "git_version = '97ff6cfd9c86c5c09d7ce775ab64ec5c99230f5d'\n"
      "hip: Optional[str] = None\n");
  EXPECT_EQ(wheel["version"], "2.3.0+cu121");
  EXPECT_EQ(wheel["cuda"], "12.1");
  EXPECT_EQ(wheel["debug"], false);
  EXPECT_EQ(wheel["git_version"], "97ff6cfd9c86c5c09d7ce775ab64ec5c99230f5d");
  EXPECT_FALSE(wheel.contains("hip")) << "only what the comparison reads";
  const auto debian = parse_torch_version_py(
      "__version__ = '1.13.0a0'\ndebug = False\ncuda = None\ngit_version = 'Unknown'\n");
  EXPECT_EQ(debian["version"], "1.13.0a0");
  EXPECT_TRUE(debian["cuda"].is_null());
  EXPECT_TRUE(parse_torch_version_py("").empty());
  EXPECT_TRUE(parse_torch_version_py("garbage = \n__version__ = unquoted\n").empty());
}

TEST(PythonTorch, AnInterpreterThatIsNotThereOrHasNoTorchSaysSo) {
  EXPECT_EQ(find_python_torch("/nonexistent/python3")["status"], "no-python");
  EXPECT_EQ(find_python_torch("no-such-python-forkcheck")["status"], "no-python");
  // /bin/sh is no Python: it cannot answer, and says how it ended.
  const auto sh = find_python_torch("/bin/sh");
  EXPECT_EQ(sh["status"], "failed") << sh;
}

}  // namespace
}  // namespace fc::harness
