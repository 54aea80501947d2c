# nccl-api-bench: times collectives through the NCCL API only; built against
# the system nccl.h and libnccl (no RPATH), so gdrcoll's libnccl.so.2 can
# replace it through LD_LIBRARY_PATH (scripts/gpu/compat.sh).
if(GDR_HAVE_CUDA AND GDR_BENCH_NCCL_LIBRARY AND GDR_BENCH_NCCL_INCLUDE)
  add_executable(nccl-api-bench ${CMAKE_CURRENT_LIST_DIR}/nccl_api_bench.c)
  target_include_directories(nccl-api-bench BEFORE PRIVATE ${GDR_BENCH_NCCL_INCLUDE})
  target_link_libraries(nccl-api-bench PRIVATE ${GDR_BENCH_NCCL_LIBRARY} CUDA::cudart ${CMAKE_DL_LIBS})
  set_target_properties(nccl-api-bench PROPERTIES SKIP_BUILD_RPATH ON C_STANDARD 11)
endif()
