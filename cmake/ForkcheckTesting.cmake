# Where tests live: a unit test beside the unit it tests (UNIT_test.cc in the unit's folder,
# declared with fc_unit_test() in that folder's CMakeLists.txt); the system tests, which run the
# forkcheck executable or cause faults in real programs, in tests/. Shared test helpers (a
# synthetic report, a file reader, a CPU clock) are in tests/support/.
#
# FORKCHECK_TESTING is set by the top-level CMakeLists.txt before any folder is added: off, every
# fc_unit_test() is nothing.
include(GoogleTest)

# Every test process tree must be gone when the suite ends: the last test checks that (Linux,
# tests/CMakeLists.txt).
set(FC_TEST_PROPS FIXTURES_REQUIRED fc_no_leftovers)

# fc_unit_test(NAME SOURCES file... [LINK target...] [PREFIX prefix] [TIMEOUT s] [OWN_MAIN]
#              [DEFINITIONS def...] [DEPENDS target...] [DISCOVER_ARGS arg...])
#   SOURCES        the test's sources (and any unit source it compiles in itself)
#   LINK           what it links besides GoogleTest and the warnings
#   PREFIX         ctest's prefix for its tests ("reports.")
#   OWN_MAIN       its main() is its own (GTest::gtest, not gtest_main)
#   DEFINITIONS    compile definitions (the path of a program it starts)
#   DEPENDS        targets to build first (the programs it starts)
#   DISCOVER_ARGS  more arguments to gtest_discover_tests (a TEST_FILTER)
function(fc_unit_test name)
  if(NOT FORKCHECK_TESTING)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 1 T "OWN_MAIN" "PREFIX;TIMEOUT"
                        "SOURCES;LINK;DEFINITIONS;DEPENDS;DISCOVER_ARGS")
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  if(T_OWN_MAIN)
    set(main GTest::gtest)
  else()
    set(main GTest::gtest_main)
  endif()
  target_link_libraries(${name} PRIVATE ${T_LINK} ${main} forkcheck_warnings)
  # Under FORKCHECK_SANITIZE the test's own code is instrumented too, and knows it
  # (__SANITIZE_ADDRESS__): a test that cannot run under ASan skips itself only if it does.
  target_compile_options(${name} PRIVATE ${FORKCHECK_SANITIZER_FLAGS})
  if(T_DEFINITIONS)
    target_compile_definitions(${name} PRIVATE ${T_DEFINITIONS})
  endif()
  if(T_DEPENDS)
    add_dependencies(${name} ${T_DEPENDS})
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  set(prefix)
  if(T_PREFIX)
    set(prefix TEST_PREFIX ${T_PREFIX})
  endif()
  gtest_discover_tests(${name} ${prefix} ${T_DISCOVER_ARGS}
                       PROPERTIES TIMEOUT ${T_TIMEOUT} ${FC_TEST_PROPS} DISCOVERY_TIMEOUT 60)
endfunction()
