# Tuning benchmark: simple regret of random vs Bayesian (GP-EI) search on Branin and Hartmann-6.
add_executable(tuning_bench ${CMAKE_CURRENT_LIST_DIR}/tuning_bench.cc)
trainyard_target_defaults(tuning_bench)
target_link_libraries(tuning_bench PRIVATE trainyard_tuning)
add_dependencies(bench tuning_bench)
