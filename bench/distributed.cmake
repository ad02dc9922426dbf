# Data-parallel benchmark (bench/distributed_bench.cc): all-reduce time for BERT-Tiny-sized
# gradients and samples/s of BERT-Tiny steps with 1 vs 2 worker processes on this machine.
if(TARGET trainyard_distributed AND TARGET trainyard_model)
  add_executable(distributed_bench ${CMAKE_CURRENT_LIST_DIR}/distributed_bench.cc)
  trainyard_target_defaults(distributed_bench)
  target_link_libraries(distributed_bench PRIVATE trainyard_distributed trainyard_model
                                                  CLI11::CLI11 nlohmann_json::nlohmann_json)
  set_target_properties(distributed_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
  add_dependencies(bench distributed_bench)
endif()
