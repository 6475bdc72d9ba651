# forkcheck-repro-torch: the cases that train or run torch (included by CMakeLists.txt, in
# every build with libtorch, FORKCHECK_PARTS=torch among them).
# The torch program's objects, linked into forkcheck-repro-torch (and, on Linux, into a plainly
# linked twin that the load-order step and its test compare it with: see below).
add_library(fc_repro_torch_objects OBJECT ${FC_REPRO_MAIN}
  support/stand_in_device.cc
  support/example_nn.cc
  support/bench_torch_worker.cc
  support/environment_torch.cc
  ${FC_TORCH_CASE_SOURCES}
  support/scripted_net.cc
  support/selfplay_writer.cc
  support/record_queue.cc
  support/scratch_dir.cc
)
# The torch cases' shared state, per OS (support/shared_memory.h): clean-up at termination and the
# clock, and the cross-process lock; the loopback TCP that selfplay-pipeline's queue runs on
# (support/record_queue.cc, one implementation for every OS over support/loopback.h's siblings;
# Winsock: ws2_32); and a process's private memory (cow-refcount-growth: Linux alone reads it).
if(WIN32)
  target_sources(fc_repro_torch_objects PRIVATE support/shared_memory_win32.cc
                                                support/shared_lock_win32.cc
                                                support/loopback_win32.cc
                                                support/private_memory_other.cc)
  target_link_libraries(fc_repro_torch_objects PUBLIC ws2_32)
elseif(APPLE)
  target_sources(fc_repro_torch_objects PRIVATE support/shared_memory_posix.cc
                                                support/shared_lock_mac.cc
                                                support/loopback_posix.cc
                                                support/private_memory_other.cc)
else()
  target_sources(fc_repro_torch_objects PRIVATE support/shared_memory_posix.cc
                                                support/shared_lock_linux.cc
                                                support/loopback_posix.cc
                                                support/private_memory_linux.cc)
endif()
# The queue and its sockets need no torch (record_queue_test builds them without it): no torch
# header precompiled into them either, when each source is its own unit (FORKCHECK_UNITY_BUILD
# off; in a unity build they share their batch's).
set_source_files_properties(support/record_queue.cc support/selfplay_writer.cc
                            support/loopback_win32.cc support/loopback_posix.cc
                            support/scratch_dir.cc
                            PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
target_link_libraries(fc_repro_torch_objects PUBLIC fc_repro_core fc_cases_root ${TORCH_LIBRARIES}
                                             PRIVATE forkcheck_warnings)
target_compile_options(fc_repro_torch_objects PRIVATE ${TORCH_CXX_FLAGS})
# One precompiled torch header for all torch cases: each would otherwise parse it for ~20 s.
target_precompile_headers(fc_repro_torch_objects PRIVATE <torch/torch.h>)
# forkcheck-repro-torch names its costliest libraries first in the loader's scope, so that each
# torch process starts faster (Linux; elsewhere it is linked as usual).
include(${PROJECT_SOURCE_DIR}/cmake/TorchLoadOrder.cmake)
fc_torch_load_order(forkcheck-repro-torch fc_repro_torch_objects)

