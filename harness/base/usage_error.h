// Bad input from the user: reported as one line, exit status 2, before anything is written.
#pragma once

#include <stdexcept>

namespace fc::harness {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fc::harness
