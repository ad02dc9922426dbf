# platform_bench: control-plane numbers of the `trainyard` server (submit->RUNNING latency, create
# throughput, list latency with 100k stored jobs, idle RSS). Drives the real binary over HTTP.
add_executable(platform_bench ${CMAKE_CURRENT_LIST_DIR}/platform_bench.cc
                              ${CMAKE_CURRENT_LIST_DIR}/bench_server.cc)
trainyard_target_defaults(platform_bench)
target_link_libraries(platform_bench PRIVATE trainyard_store trainyard_httplib
                                             nlohmann_json::nlohmann_json)
target_compile_definitions(platform_bench PRIVATE
    TRAINYARD_TOOL="${PROJECT_BINARY_DIR}/tools/trainyard")
add_dependencies(platform_bench trainyard)
add_dependencies(bench platform_bench)
