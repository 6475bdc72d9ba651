// Where forkcheck's parts are: the repro programs, the watch shim, the report schema. Each is
// looked for relative to the forkcheck executable's own directory, first where the build tree
// puts it, then where `cmake --install` (or the .deb) puts it, so the build tree, an install
// under any prefix and an installed tree moved elsewhere all work with no source tree and from
// any working directory. An environment variable overrides each search.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fc::harness {

struct PartLookup {
  std::filesystem::path found;                // empty when none of `looked` exists
  std::vector<std::filesystem::path> looked;  // every place tried, in order
  std::string looked_text() const;            // "a, b, c"
};

// The directory of the running forkcheck executable (the working directory when unknown).
std::filesystem::path own_directory();

// The folder holding forkcheck-repro and forkcheck-repro-torch (and the bench peer script):
// $FORKCHECK_REPRO_DIR, else the executable's folder (build tree), else <bin>/../libexec/forkcheck.
PartLookup find_repro_dir();

// `file_name` (libforkcheck_watch.so or .dylib): $FORKCHECK_WATCH_SHIM, else <bin>/../lib
// (build tree), else <bin>/../lib/forkcheck (installed), else <bin>.
PartLookup find_watch_shim_file(const std::string& file_name);

// report.schema.json: $FORKCHECK_SCHEMA, else <bin>/../share/forkcheck (installed; the build
// tree has a copy there too).
PartLookup find_report_schema();

// The torch kit a package without the torch program ships (harness/torch/torch_kit.h):
// $FORKCHECK_TORCH_KIT, else <bin>/../share/forkcheck/torch-kit; found only with its manifest.
PartLookup find_torch_kit();

// The Python bootstrap's folder (sitecustomize.py, forkcheck_boot.py: harness/python/):
// $FORKCHECK_PY_BOOTSTRAP, else <bin>/../share/forkcheck/python (installed; the build tree has a
// copy there too).
PartLookup find_python_bootstrap();

// Where the bootstrap keeps its compiled code between runs (sitecustomize.py reads it from
// FORKCHECK_PY_BYTECODE): $FORKCHECK_PY_BYTECODE, else $XDG_CACHE_HOME/forkcheck/python, else
// $HOME/.cache/forkcheck/python, made (owner only) if missing; "" where none can be made (each
// Python process then compiles the bootstrap's source, about 20 ms).
std::string python_bytecode_folder();

}  // namespace fc::harness
