# container_bench: warm-image container start -> first output (podman run, and the detached path
# PodmanEngine uses) against a host process start. Needs podman, runc and busybox-static.
add_executable(container_bench ${CMAKE_CURRENT_LIST_DIR}/container_bench.cc)
trainyard_target_defaults(container_bench)
target_link_libraries(container_bench PRIVATE trainyard_container nlohmann_json::nlohmann_json)
add_dependencies(bench container_bench)

# container_job_bench: what a client sees of a container job (create -> RUNNING, first line,
# SUCCEEDED) against `podman run --rm` of the same image, warm and cold, with a step breakdown.
add_executable(container_job_bench ${CMAKE_CURRENT_LIST_DIR}/container_job_bench.cc
                                   ${CMAKE_CURRENT_LIST_DIR}/bench_server.cc)
trainyard_target_defaults(container_job_bench)
target_link_libraries(container_job_bench PRIVATE trainyard_common trainyard_httplib
                                                  nlohmann_json::nlohmann_json)
target_compile_definitions(container_job_bench PRIVATE
    TRAINYARD_TOOL="${PROJECT_BINARY_DIR}/tools/trainyard"
    TRAINYARD_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(container_job_bench trainyard)
add_dependencies(bench container_job_bench)
