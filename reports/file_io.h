// The reports' file I/O that each OS does its own way (file_io_posix.cc, file_io_win32.cc): a
// file created for writing that child processes do not inherit, and write_file_atomically()
// (declared in reporter.h). Paths are std::filesystem paths: wide on Windows, where fopen() of a
// narrow string would mangle every name outside the ANSI code page.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

namespace fc::reports::file_io {

// Creates `path` anew for writing in binary mode (no newline translation), close-on-exec / not
// inheritable; nullptr when it cannot, with `error` saying why. It fails when anything is at
// `path` already, a symlink included: nothing is ever written through a link someone else placed
// there. A caller that means to replace a file removes it first (std::filesystem::remove removes
// a symlink, not its target).
std::FILE* create_new_for_writing(const std::filesystem::path& path, std::string& error);

}  // namespace fc::reports::file_io
