# Data-parallel benchmark (bench/distributed_bench.cc): all-reduce time for BERT-Tiny-sized
# gradients and samples/s of BERT-Tiny steps with 1 vs 2 worker processes on this machine, and
# the real trainyard-bert with 1 vs 2 data-parallel processes on the UCI sample.
if(TARGET trainyard_distributed AND TARGET trainyard_model)
  add_executable(distributed_bench ${CMAKE_CURRENT_LIST_DIR}/distributed_bench.cc)
  trainyard_target_defaults(distributed_bench)
  target_link_libraries(distributed_bench PRIVATE trainyard_distributed trainyard_model
                                                  CLI11::CLI11 nlohmann_json::nlohmann_json)
  target_compile_definitions(distributed_bench PRIVATE TRAINYARD_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                                        TRAINYARD_BINARY_DIR="${PROJECT_BINARY_DIR}")
  set_target_properties(distributed_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
  if(TARGET trainyard-bert)
    add_dependencies(distributed_bench trainyard-bert)
  endif()
  add_dependencies(bench distributed_bench)
endif()
