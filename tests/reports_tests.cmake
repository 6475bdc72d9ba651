# The reports (issue 4) of a real run: validated against reports/report.schema.json, rendered
# again by `forkcheck report --from`, and drawn by headless Chromium. (The reporters on made-up
# runs are unit tests beside them: reports/CMakeLists.txt.)
find_package(pugixml REQUIRED)

# The rest runs forkcheck and reads what it wrote; the tests of it are POSIX programs (unistd),
# so not on Windows. Linux alone has Debian's python3-jsonschema and chromium.
if(WIN32)
  return()
endif()

# One real run, shared by the tests below (a ctest fixture): the hang case and the tiny NN.
set(FC_REAL_REPORT_DIR ${CMAKE_CURRENT_BINARY_DIR}/real-report)
add_test(NAME reports.real_run
         COMMAND forkcheck run gomp-fork-hang tiny-nn-spawn --out ${FC_REAL_REPORT_DIR})
set_tests_properties(reports.real_run PROPERTIES TIMEOUT 300 FIXTURES_SETUP fc_real_report
                                                 FIXTURES_REQUIRED fc_no_leftovers)
# Runs after every test of the real report, and (requiring fc_no_leftovers) before the check that
# nothing is left running, which so also waits for the Chromium tests.
add_test(NAME reports.real_run_done COMMAND ${CMAKE_COMMAND} -E echo "reports tests done")
set_tests_properties(reports.real_run_done PROPERTIES FIXTURES_CLEANUP fc_real_report
                                                      FIXTURES_REQUIRED fc_no_leftovers)
set(FC_REAL_REPORT_PROPS FIXTURES_REQUIRED fc_real_report)

# report.json against the published schema, with Debian's python3-jsonschema (draft 2020-12).
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_test(NAME reports.schema_validates_real_report
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/validate_report.py
                   ${PROJECT_SOURCE_DIR}/reports/report.schema.json ${FC_REAL_REPORT_DIR}/report.json)
  set_tests_properties(reports.schema_validates_real_report PROPERTIES TIMEOUT 60
                                                                      ${FC_REAL_REPORT_PROPS})
endif()

# `forkcheck report --from` and `forkcheck env`, from the outside.
add_executable(report_cli_test ${CMAKE_CURRENT_LIST_DIR}/report_cli_test.cc)
target_link_libraries(report_cli_test PRIVATE fc_harness pugixml::pugixml GTest::gtest_main forkcheck_warnings)
target_compile_definitions(report_cli_test PRIVATE FC_FORKCHECK="$<TARGET_FILE:forkcheck>"
                                                   FC_REAL_REPORT_DIR="${FC_REAL_REPORT_DIR}")
add_dependencies(report_cli_test forkcheck forkcheck-repro forkcheck-repro-torch)
gtest_discover_tests(report_cli_test TEST_PREFIX "reports." PROPERTIES TIMEOUT 120 ${FC_REAL_REPORT_PROPS}
                     DISCOVERY_TIMEOUT 60)

# `forkcheck diff` from the outside: the real report against itself and against edited copies.
add_executable(diff_cli_test ${CMAKE_CURRENT_LIST_DIR}/diff_cli_test.cc)
target_link_libraries(diff_cli_test PRIVATE fc_harness GTest::gtest_main forkcheck_warnings)
target_compile_definitions(diff_cli_test PRIVATE FC_FORKCHECK="$<TARGET_FILE:forkcheck>"
                                                 FC_REAL_REPORT_DIR="${FC_REAL_REPORT_DIR}")
add_dependencies(diff_cli_test forkcheck forkcheck-repro forkcheck-repro-torch)
gtest_discover_tests(diff_cli_test TEST_PREFIX "reports." PROPERTIES TIMEOUT 120 ${FC_REAL_REPORT_PROPS}
                     DISCOVERY_TIMEOUT 60)

# report.html in headless Chromium: a screenshot and the DOM. Linux only: Debian's chromium, and
# libpng, which neither Homebrew's list (ci/install-deps-macos.sh) nor macOS's SDK provides.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  find_package(PNG REQUIRED)
  find_program(FC_CHROMIUM NAMES chromium chromium-browser)
  add_executable(report_html_chromium_test ${CMAKE_CURRENT_LIST_DIR}/report_html_chromium_test.cc)
  target_link_libraries(report_html_chromium_test PRIVATE fc_harness PNG::PNG GTest::gtest_main
                                                          forkcheck_warnings)
  target_compile_definitions(report_html_chromium_test
                             PRIVATE FC_REAL_REPORT_DIR="${FC_REAL_REPORT_DIR}"
                                     FC_CHROMIUM="${FC_CHROMIUM}")
  gtest_discover_tests(report_html_chromium_test TEST_PREFIX "reports." PROPERTIES TIMEOUT 180
                       ${FC_REAL_REPORT_PROPS} DISCOVERY_TIMEOUT 60)
endif()
