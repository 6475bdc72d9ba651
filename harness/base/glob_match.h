// Shell-style wildcards, as POSIX fnmatch() with no flags matches them: `*` any run of characters
// (`/` included), `?` one character, `[abc]`, `[a-z]`, `[!a]` or `[^a]` one of a set, `\x` the
// character x. Our own, so that `--only` means the same on Windows, which has no fnmatch().
#pragma once

#include <string_view>

namespace fc::harness {

bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace fc::harness
