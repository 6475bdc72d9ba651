# The layers include only what they link (harness -> reports -> repros, no arrow back), and the
# compiler holds them to it: each layer's headers are reachable through an include root of its
# own, and a target sees a root only when it links that layer. The roots live in the build tree
# (layers/NAME/), each holding one link named as the layer is spelled in #include lines, so the
# source tree keeps its folders (repros/ holds launch/, core/ and cases/ side by side):
#   launch      "launch/..."      repros/launch       fc_launch (and <forkcheck/launch.h>)
#   core        "core/..."        repros/core         fc_repro_core
#   cases       "cases/..."       repros/cases        the repro programs (fc_cases_root)
#   reports     "reports/..."     reports             fc_reports
#   vocabulary  "core/outcome.h", "core/quantity_text.h": the header-only words for outcomes and
#               quantities both sides agree on, all reports and the harness see of repros/core
#   harness     "harness/..."     harness             fc_harness
# A header of a layer a target does not link is then "No such file" at compile time
# (tests/layering_test.py proves it, layer by layer). Windows has no symlinks for every user: there
# the roots are the source folders themselves and the Linux and macOS builds hold the layers.

set(FC_LAYERS_DIR ${PROJECT_BINARY_DIR}/layers)
if(CMAKE_HOST_WIN32)
  set(FC_LAYERS_BY_LINK OFF)
else()
  set(FC_LAYERS_BY_LINK ON)
endif()

# fc_layer_root(VAR NAME SOURCE): VAR is the include root of layer NAME whose headers are in
# SOURCE (a folder, reached as "NAME/..."), or SOURCE's parent where links are not made.
function(fc_layer_root var name source)
  if(NOT FC_LAYERS_BY_LINK)
    get_filename_component(parent ${source} DIRECTORY)
    set(${var} ${parent} PARENT_SCOPE)
    return()
  endif()
  file(MAKE_DIRECTORY ${FC_LAYERS_DIR}/${name})
  file(CREATE_LINK ${source} ${FC_LAYERS_DIR}/${name}/${name} SYMBOLIC)
  set(${var} ${FC_LAYERS_DIR}/${name} PARENT_SCOPE)
endfunction()

# The vocabulary root: two headers of repros/core, each linked on its own.
function(fc_vocabulary_root var)
  if(NOT FC_LAYERS_BY_LINK)
    set(${var} ${PROJECT_SOURCE_DIR}/repros PARENT_SCOPE)
    return()
  endif()
  file(MAKE_DIRECTORY ${FC_LAYERS_DIR}/vocabulary/core)
  foreach(h outcome.h quantity_text.h)
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/repros/core/${h} ${FC_LAYERS_DIR}/vocabulary/core/${h}
         SYMBOLIC)
  endforeach()
  set(${var} ${FC_LAYERS_DIR}/vocabulary PARENT_SCOPE)
endfunction()

fc_layer_root(FC_LAUNCH_ROOT launch ${PROJECT_SOURCE_DIR}/repros/launch)
fc_layer_root(FC_CORE_ROOT core ${PROJECT_SOURCE_DIR}/repros/core)
fc_layer_root(FC_CASES_ROOT cases ${PROJECT_SOURCE_DIR}/repros/cases)
fc_layer_root(FC_REPORTS_ROOT reports ${PROJECT_SOURCE_DIR}/reports)
fc_layer_root(FC_HARNESS_ROOT harness ${PROJECT_SOURCE_DIR}/harness)
fc_vocabulary_root(FC_VOCABULARY_ROOT)

# The repro programs' own layer (cases/...): what compiles a case or its support links this.
add_library(fc_cases_root INTERFACE)
target_include_directories(fc_cases_root INTERFACE ${FC_CASES_ROOT})
