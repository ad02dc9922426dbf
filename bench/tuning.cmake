# Tuning benchmark: simple regret of random vs Bayesian (GP-EI) search on Branin and Hartmann-6.
add_executable(tuning_bench ${CMAKE_CURRENT_LIST_DIR}/tuning_bench.cc)
trainyard_target_defaults(tuning_bench)
target_link_libraries(tuning_bench PRIVATE trainyard_tuning)
add_dependencies(bench tuning_bench)

# Trainyard's searchers behind an ask/tell protocol for bench/tuners/compare.py.
add_executable(tuner_ask_tell ${CMAKE_CURRENT_LIST_DIR}/tuner_ask_tell.cc)
trainyard_target_defaults(tuner_ask_tell)
target_link_libraries(tuner_ask_tell PRIVATE trainyard_tuning)
add_dependencies(bench tuner_ask_tell)
