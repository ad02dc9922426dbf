# http_load_bench: /healthz and create latency with 200 log streams, 200 idle keep-alive
# connections and 8 creating clients against an in-process ApiServer (issue #46 item 4).
add_executable(http_load_bench ${CMAKE_CURRENT_LIST_DIR}/http_load_bench.cc
                               ${CMAKE_CURRENT_LIST_DIR}/bench_server.cc)
trainyard_target_defaults(http_load_bench)
target_link_libraries(http_load_bench PRIVATE trainyard_api trainyard_executor_fake
                                              trainyard_store trainyard_httplib
                                              nlohmann_json::nlohmann_json)
add_dependencies(bench http_load_bench)
