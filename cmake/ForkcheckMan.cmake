# forkcheck(1), made from the program's own help by help2man (cmake/man-page.sh), so that the
# page and `forkcheck --help` cannot disagree. Without help2man (Debian: help2man, which
# ci/install-deps-debian.sh installs) no page is made, and configure says so.
find_program(FORKCHECK_HELP2MAN help2man)
if(TARGET forkcheck AND FORKCHECK_HELP2MAN AND NOT WIN32 AND NOT CMAKE_CROSSCOMPILING)
  set(FORKCHECK_MAN_PAGE ${PROJECT_BINARY_DIR}/man/forkcheck.1)
  add_custom_command(
    OUTPUT ${FORKCHECK_MAN_PAGE}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
    COMMAND bash ${PROJECT_SOURCE_DIR}/cmake/man-page.sh $<TARGET_FILE:forkcheck> ${FORKCHECK_MAN_PAGE}
    DEPENDS forkcheck ${PROJECT_SOURCE_DIR}/cmake/man-page.sh
    COMMENT "forkcheck(1) from forkcheck --help"
    VERBATIM)
  add_custom_target(forkcheck_man ALL DEPENDS ${FORKCHECK_MAN_PAGE})
  install(FILES ${FORKCHECK_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT forkcheck)
elseif(TARGET forkcheck AND NOT WIN32)
  message(STATUS "forkcheck(1) is not made: no help2man (Debian: apt-get install help2man)")
endif()
