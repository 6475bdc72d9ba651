# launch_test: fc_launch's start methods (fork, spawn, forkserver). Its main() is its own:
# launch::init() must run before anything else, since spawned workers re-exec this binary.
add_executable(launch_test
  ${CMAKE_CURRENT_LIST_DIR}/launch_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/launch/launch_test_workers.cc
)
target_include_directories(launch_test PRIVATE ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(launch_test PRIVATE fc_launch GTest::gtest Threads::Threads forkcheck_warnings)
set(FC_LAUNCH_PROPS ${FC_TEST_PROPS})
# Three tests read /proc (a worker's parent, a forkserver's parent, a signal mask): Linux only.
# TEST_FILTER (CMake 3.22) leaves them out elsewhere; the rest need nothing Linux's own.
set(FC_LAUNCH_FILTER)
if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(FC_LAUNCH_FILTER TEST_FILTER
      "-*/LaunchTest.ParentOfWorker/*:*/LaunchTest.TerminateEscalatesToSigkill/*:Forkserver.AForkedChildStartsItsOwnServer")
endif()
gtest_discover_tests(launch_test
  TEST_PREFIX "launch."
  NO_PRETTY_VALUES
  ${FC_LAUNCH_FILTER}
  PROPERTIES TIMEOUT 120 ${FC_LAUNCH_PROPS}
  DISCOVERY_TIMEOUT 60
)

# A program without launch::init(): spawn must refuse rather than re-run its main().
add_executable(launch_no_init_test ${CMAKE_CURRENT_LIST_DIR}/launch/no_init_main.cc)
target_link_libraries(launch_no_init_test PRIVATE fc_launch forkcheck_warnings)
# Built along with launch_test, so that building that one target readies every launch.* test.
add_dependencies(launch_test launch_no_init_test)
add_test(NAME launch.SpawnRequiresInit COMMAND launch_no_init_test)
set_tests_properties(launch.SpawnRequiresInit PROPERTIES TIMEOUT 60 ${FC_LAUNCH_PROPS})
