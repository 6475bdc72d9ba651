# forkcheck installed (tests/install/): `cmake --install` into a temporary prefix, then moved,
#   install.tree      the files in place, nothing pointing back at the build tree
#   install.run_all   the moved tree's `forkcheck all`, from an empty directory: every part
#                     found under it, the same catalog as the build tree's, summary ok
#   install.consumer  examples/launch-consumer configured with find_package(forkcheck), built
#                     and run against it; a newer version than installed refused
#   package.deb       cpack's two .debs: contents, Depends, run unpacked (and installed with
#                     dpkg when FORKCHECK_TEST_DEB_INSTALL=1, as ci/run-tests.sh sets as root)
#   install.portable  ci/make-portable.sh's archive (a FORKCHECK_PORTABLE native build of its
#                     own), unpacked into an empty root with only a Python in it: exec and a
#                     native case run there
#   install.wheel     ci/make-wheel.sh's wheel of that build, pip-installed with --no-index into
#                     a venv of pyenv's 3.12: exec, watch, matrix, list and all from it
#   install.portable_torch  that build's torch kit used as a package's user uses it: the torch
#                     cases named before they are built, not run without cmake (and why), built
#                     on first use against this machine's Python torch, then run and listed
#   install.torch_from_python  FORKCHECK_TORCH_FROM_PYTHON configured: a wheel-like package used,
#                     this machine's Python torch used or refused saying why, no torch refused
# Linux: the tests use bash, readelf and, for the package, Debian's dpkg tools.
set(fc_install_work ${CMAKE_BINARY_DIR}/install-test)
set(fc_install_script ${CMAKE_CURRENT_SOURCE_DIR}/install/check_install.sh)
add_test(NAME install.tree COMMAND bash ${fc_install_script} tree ${CMAKE_BINARY_DIR} ${fc_install_work})
add_test(NAME install.run_all
         COMMAND bash ${fc_install_script} all ${CMAKE_BINARY_DIR} ${fc_install_work})
add_test(NAME install.consumer COMMAND bash ${fc_install_script} consumer ${CMAKE_BINARY_DIR}
                                       ${fc_install_work} ${PROJECT_SOURCE_DIR})
set_tests_properties(install.tree PROPERTIES TIMEOUT 120 FIXTURES_SETUP fc_installed
                                             ${FC_TEST_PROPS})
set_tests_properties(install.run_all install.consumer PROPERTIES TIMEOUT 300
                     FIXTURES_REQUIRED "fc_installed;fc_no_leftovers")
add_test(NAME package.deb COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/check_package.sh
                                  ${CMAKE_BINARY_DIR} ${CMAKE_BINARY_DIR}/package-test
                                  ${PROJECT_SOURCE_DIR})
set_tests_properties(package.deb PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77 ${FC_TEST_PROPS})

add_test(NAME install.torch_from_python
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/check_torch_from_python.sh
                 ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/torch-from-python-test ${Torch_DIR})
set_tests_properties(install.torch_from_python PROPERTIES TIMEOUT 300 ${FC_TEST_PROPS})

# The packages that need no build (issue: archive and wheel): a portable build of its own, made
# first (COST: it compiles for minutes), which the wheel then packs.
add_test(NAME install.portable
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/check_portable.sh
                 ${CMAKE_BINARY_DIR}/portable ${CMAKE_BINARY_DIR}/portable-dist)
set_tests_properties(install.portable PROPERTIES TIMEOUT 1200 SKIP_RETURN_CODE 77 COST 300
                                                 FIXTURES_SETUP fc_portable ${FC_TEST_PROPS})
add_test(NAME install.wheel
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/check_wheel.sh ${CMAKE_BINARY_DIR}/portable
                 ${CMAKE_BINARY_DIR}/wheel-dist)
set_tests_properties(install.wheel PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77
                                              FIXTURES_REQUIRED "fc_portable;fc_no_leftovers")
# The torch kit of that build, built against this machine's Python torch (COST: it compiles the
# torch program for minutes).
add_test(NAME install.portable_torch
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/check_portable_torch.sh
                 ${CMAKE_BINARY_DIR}/portable)
set_tests_properties(install.portable_torch PROPERTIES TIMEOUT 1800 SKIP_RETURN_CODE 77 COST 400
                                                       FIXTURES_REQUIRED "fc_portable;fc_no_leftovers")
