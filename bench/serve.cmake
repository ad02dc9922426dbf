# serve_bench: requests/s and p50/p99 latency of a model server (`trainyard-bert serve`, or
# TorchServe for comparison) at 1 and 16 concurrent clients.
add_executable(serve_bench ${CMAKE_CURRENT_LIST_DIR}/serve_bench.cc
                           ${CMAKE_CURRENT_LIST_DIR}/bench_server.cc)
trainyard_target_defaults(serve_bench)
target_link_libraries(serve_bench PRIVATE trainyard_httplib nlohmann_json::nlohmann_json)
add_dependencies(bench serve_bench)
