# The torch kit: what a package without the torch program (the portable archive, the wheel) ships
# so that forkcheck can build that program on first use against the user's own torch, as C++
# extensions are built (harness/torch/torch_kit.h runs it: FORKCHECK_PARTS=torch,
# FORKCHECK_TORCH_FROM_PYTHON=<their python>). Installed under share/forkcheck/torch-kit:
#   src/                  this project's CMakeLists.txt, cmake/, include/ and repros/, as built here
#   third_party/include/  the Boost headers the start methods include (every header GCC and Clang
#                         read for them here, and Boost's config), and nlohmann/json: the kit needs
#                         no Boost or nlohmann/json of the user's machine (both header-only here)
#   manifest.json         {"forkcheck": version, "sources_sha256", "cases": the torch cases' ids}
include_guard(GLOBAL)

option(FORKCHECK_TORCH_KIT "Ship the torch kit (on by default in a portable build)"
       ${FORKCHECK_PORTABLE})

# FORKCHECK_PARTS=torch: Boost's and nlohmann/json's headers, from the kit when the harness says
# where (FORKCHECK_KIT_INCLUDE_DIR), else found as any build finds them.
macro(fc_torch_kit_dependencies)
  set(FORKCHECK_KIT_INCLUDE_DIR "" CACHE PATH "The torch kit's third-party headers")
  if(FORKCHECK_KIT_INCLUDE_DIR)
    if(NOT EXISTS "${FORKCHECK_KIT_INCLUDE_DIR}/boost/version.hpp" OR
       NOT EXISTS "${FORKCHECK_KIT_INCLUDE_DIR}/nlohmann/json.hpp")
      message(FATAL_ERROR "FORKCHECK_KIT_INCLUDE_DIR=${FORKCHECK_KIT_INCLUDE_DIR} holds no "
                          "boost/version.hpp and nlohmann/json.hpp")
    endif()
    foreach(target Boost::headers nlohmann_json::nlohmann_json)
      add_library(${target} INTERFACE IMPORTED)
      set_target_properties(${target} PROPERTIES
                            INTERFACE_INCLUDE_DIRECTORIES "${FORKCHECK_KIT_INCLUDE_DIR}")
    endforeach()
  else()
    find_package(Boost 1.71 REQUIRED)
    find_package(nlohmann_json 3.9 REQUIRED)
  endif()
endmacro()

# The headers `header` includes from `root` (Boost's include folder), as GCC and Clang read them
# (-M: each reads a few the other does not), relative to `root`, in `out`. Both are needed here.
function(fc_kit_header_closure out header root)
  find_program(FC_KIT_CLANGXX NAMES clang++ clang++-18 clang++-17 clang++-16 clang++-15 clang++-14)
  find_program(FC_KIT_GXX NAMES g++)
  if(NOT FC_KIT_CLANGXX OR NOT FC_KIT_GXX)
    message(FATAL_ERROR "The torch kit (FORKCHECK_TORCH_KIT) needs both g++ and clang++ here, to "
                        "ship every Boost header either compiler reads on a user's machine "
                        "(found: g++ '${FC_KIT_GXX}', clang++ '${FC_KIT_CLANGXX}')")
  endif()
  set(compilers "${FC_KIT_GXX}" "${FC_KIT_CLANGXX}")
  set(files "")
  foreach(cxx IN LISTS compilers)
    execute_process(COMMAND "${cxx}" -std=c++17 -M -x c++ "${header}" -I "${root}"
                    OUTPUT_VARIABLE deps RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "torch kit: ${cxx} -M ${header} failed: ${err}")
    endif()
    string(REPLACE "\\\n" " " deps "${deps}")
    string(REGEX REPLACE "[ \t\r\n]+" ";" deps "${deps}")
    foreach(dep IN LISTS deps)
      if(dep MATCHES "^${root}/(boost/.*)$")
        list(APPEND files "${CMAKE_MATCH_1}")
      endif()
    endforeach()
  endforeach()
  # Boost's config, whole: it picks a header per compiler and standard library.
  file(GLOB_RECURSE config RELATIVE "${root}" "${root}/boost/config/*")
  list(APPEND files ${config})
  list(REMOVE_DUPLICATES files)
  set(${out} "${files}" PARENT_SCOPE)
endfunction()

function(fc_torch_kit_install)
  if(NOT FORKCHECK_TORCH_KIT OR TARGET forkcheck-repro-torch OR FORKCHECK_HARNESS_ONLY)
    return()
  endif()
  set(kit ${FORKCHECK_INSTALL_DATADIR}/torch-kit)
  # The sources, as this build has them (build folders inside the tree are not copied).
  install(FILES ${PROJECT_SOURCE_DIR}/CMakeLists.txt ${PROJECT_SOURCE_DIR}/LICENSE
          DESTINATION ${kit}/src COMPONENT forkcheck)
  foreach(dir cmake include repros)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${kit}/src/${dir}
            COMPONENT forkcheck FILES_MATCHING
            PATTERN "*.cc" PATTERN "*.h" PATTERN "*.cmake" PATTERN "*.in" PATTERN "*.sh"
            PATTERN "CMakeLists.txt" PATTERN "*.py" PATTERN "*.txt")
  endforeach()

  # Boost's headers for the start methods, and nlohmann/json's.
  get_target_property(boost_root Boost::headers INTERFACE_INCLUDE_DIRECTORIES)
  list(GET boost_root 0 boost_root)
  fc_kit_header_closure(boost_files ${PROJECT_SOURCE_DIR}/repros/launch/boost_process_v1.h
                        "${boost_root}")
  foreach(file IN LISTS boost_files)
    get_filename_component(sub "${file}" DIRECTORY)
    install(FILES "${boost_root}/${file}" DESTINATION ${kit}/third_party/include/${sub}
            COMPONENT forkcheck)
  endforeach()
  # Their licences, which copies of their sources must carry (Debian's copyright files hold
  # them; other systems' packages keep them under licenses/).
  # (Debian: the packages' copyright files; ci/install-deps-manylinux.sh: /usr/local/share/licenses.)
  file(GLOB boost_licences /usr/share/doc/libboost[0-9]*.[0-9]*-dev/copyright
                           /usr/share/licenses/boost*/LICENSE* /usr/local/share/licenses/boost*/LICENSE*
                           /usr/share/doc/boost*/LICENSE_1_0.txt)
  file(GLOB json_licences /usr/share/doc/nlohmann-json*-dev/copyright
                          /usr/share/licenses/json-devel/LICENSE* /usr/share/licenses/nlohmann*/LICENSE*
                          /usr/local/share/licenses/nlohmann*/LICENSE*)
  if(NOT boost_licences OR NOT json_licences)
    message(FATAL_ERROR "The torch kit copies Boost's and nlohmann/json's headers, which must carry "
                        "their licences, and one was not found (Boost: '${boost_licences}', "
                        "nlohmann/json: '${json_licences}'); install it under "
                        "/usr/local/share/licenses/boost or .../nlohmann_json")
  endif()
  foreach(licence IN LISTS boost_licences json_licences)
    get_filename_component(package "${licence}" DIRECTORY)
    get_filename_component(package "${package}" NAME)
    get_filename_component(name "${licence}" NAME)
    install(FILES "${licence}" DESTINATION ${kit}/third_party/licences RENAME ${package}-${name}
            COMPONENT forkcheck)
  endforeach()
  get_target_property(json_root nlohmann_json::nlohmann_json INTERFACE_INCLUDE_DIRECTORIES)
  list(GET json_root 0 json_root)
  install(DIRECTORY ${json_root}/nlohmann DESTINATION ${kit}/third_party/include
          COMPONENT forkcheck)

  # The cases it builds, by id (repros/cases/CMakeLists.txt names their files after them).
  set(ids "")
  get_property(sources GLOBAL PROPERTY FC_TORCH_CASE_SOURCES)
  foreach(source IN LISTS sources)
    get_filename_component(id "${source}" NAME_WE)
    string(REPLACE "_" "-" id "${id}")
    list(APPEND ids "\"${id}\"")
  endforeach()
  string(REPLACE ";" ", " ids "${ids}")
  # A hash of the sources it ships, read at configure time: a kit whose sources changed under the
  # same version is another kit, and its programs are built again (harness/torch/torch_kit.cc).
  file(GLOB_RECURSE sources LIST_DIRECTORIES false RELATIVE ${PROJECT_SOURCE_DIR}
       ${PROJECT_SOURCE_DIR}/cmake/* ${PROJECT_SOURCE_DIR}/include/* ${PROJECT_SOURCE_DIR}/repros/*)
  list(SORT sources)
  set(hashes "")
  foreach(source IN LISTS sources CMakeLists.txt)
    file(SHA256 ${PROJECT_SOURCE_DIR}/${source} hash)
    string(APPEND hashes "${source} ${hash}\n")
  endforeach()
  string(SHA256 sources_hash "${hashes}")
  file(WRITE ${PROJECT_BINARY_DIR}/torch-kit/manifest.json
       "{\"forkcheck\": \"${PROJECT_VERSION}\", \"sources_sha256\": \"${sources_hash}\", "
       "\"cases\": [${ids}]}\n")
  install(FILES ${PROJECT_BINARY_DIR}/torch-kit/manifest.json DESTINATION ${kit}
          COMPONENT forkcheck)
endfunction()
