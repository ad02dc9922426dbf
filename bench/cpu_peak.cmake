# cpu_peak_bench: the machine's measured fp32 FMA peak (GFLOP/s per core and for all cores), the
# denominator of bench/README.md's fraction of peak. Run: build/bench/cpu_peak_bench
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  add_executable(cpu_peak_bench ${CMAKE_CURRENT_LIST_DIR}/cpu_peak_bench.cc)
  trainyard_target_defaults(cpu_peak_bench)
  target_link_libraries(cpu_peak_bench PRIVATE Threads::Threads)
  set_target_properties(cpu_peak_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
  add_dependencies(bench cpu_peak_bench)
endif()
