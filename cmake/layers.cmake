# One target per layer of ../shared/DESIGN.md ("Layers"), with include
# scopes that match its arrows. Every file includes relative to src/ (or to
# the root, for collectives/ and topology/), so each layer gets an include
# root of its own: build/layers/<layer>/ holds a link to its own folder and
# to the folder of every layer below it, and none above, and its sources see
# that root and include/ only. An upward include then fails to compile,
# transitively too (scripts/check-layers.sh checks the same arrows without
# building). gdrcoll_static is the union of the library layers' objects;
# libnccl.so.2 (compat) and gdr_sim (sim) use their layer's root.
#
# Included from the top CMakeLists.txt after the options and packages;
# defines gdrcoll_static and GDR_LAYER_ROOT_<layer> for the subdirectories.

# Top to bottom: layer=folder (relative to the root).
set(GDR_LAYER_ROWS
  api=src/api compat=src/compat dispatch=src/dispatch paths=src/paths comm=src/comm
  bootstrap=src/bootstrap sim=src/sim collectives=collectives transport=src/transport
  topology=topology security=src/security device=src/device progress=src/progress core=src/core)

set(GDR_LAYER_NAMES "")
foreach(row IN LISTS GDR_LAYER_ROWS)
  string(REPLACE "=" ";" pair "${row}")
  list(GET pair 0 name)
  list(APPEND GDR_LAYER_NAMES ${name})
endforeach()

# The include roots: links made at configure time.
list(LENGTH GDR_LAYER_ROWS n_rows)
math(EXPR last_row "${n_rows} - 1")
foreach(i RANGE ${last_row})
  list(GET GDR_LAYER_NAMES ${i} name)
  set(root ${CMAKE_BINARY_DIR}/layers/${name})
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root})
  foreach(j RANGE ${i} ${last_row})
    list(GET GDR_LAYER_ROWS ${j} row)
    string(REPLACE "=" ";" pair "${row}")
    list(GET pair 1 folder)
    get_filename_component(leaf ${folder} NAME)
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${folder} ${root}/${leaf} SYMBOLIC)
  endforeach()
  set(GDR_LAYER_ROOT_${name} ${root})
endforeach()

# What every layer's objects compile with (gdrcoll_static passes the same
# definitions and libraries on to its users).
add_library(gdr_layer_config INTERFACE)
target_include_directories(gdr_layer_config INTERFACE ${CMAKE_SOURCE_DIR}/include)
target_include_directories(gdr_layer_config SYSTEM INTERFACE ${PMIX_INCLUDE_DIR})
target_compile_definitions(gdr_layer_config INTERFACE
  GDR_HAVE_CUDA=$<BOOL:${GDR_HAVE_CUDA}> GDR_HAVE_IB=$<BOOL:${GDR_HAVE_IB}>
  # C bindings only: keep Open MPI's and MPICH's C++ bindings out.
  OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1
  GDR_VERSION_STRING="${PROJECT_VERSION}")
target_link_libraries(gdr_layer_config INTERFACE Threads::Threads HWLOC::hwloc OpenSSL::Crypto gdr_warnings)
if(GDR_HAVE_IB)
  target_include_directories(gdr_layer_config INTERFACE ${IBVERBS_INCLUDE_DIR})
endif()
if(GDR_HAVE_CUDA)
  target_include_directories(gdr_layer_config SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
endif()

# The library layers' sources (compat and sim are targets of their own).
set(GDR_LAYER_SOURCES_api src/api/*.cc)
set(GDR_LAYER_SOURCES_dispatch src/dispatch/*.cc)
set(GDR_LAYER_SOURCES_paths src/paths/*.cc src/paths/staged/*.cc src/paths/direct/*.cc)
set(GDR_LAYER_SOURCES_comm src/comm/*.cc)
set(GDR_LAYER_SOURCES_bootstrap src/bootstrap/*.cc)
set(GDR_LAYER_SOURCES_collectives collectives/*.cc)
set(GDR_LAYER_SOURCES_transport src/transport/*.cc src/transport/shm/*.cc src/transport/socket/*.cc)
set(GDR_LAYER_SOURCES_topology topology/*.cc)
set(GDR_LAYER_SOURCES_security src/security/*.cc)
set(GDR_LAYER_SOURCES_device "")
set(GDR_LAYER_SOURCES_progress src/progress/*.cc)
set(GDR_LAYER_SOURCES_core src/core/*.cc)
if(GDR_HAVE_IB)
  list(APPEND GDR_LAYER_SOURCES_transport src/transport/ib/*.cc)
endif()
if(GDR_HAVE_CUDA)
  list(APPEND GDR_LAYER_SOURCES_device src/device/*.cc src/device/*.cu)
  list(APPEND GDR_LAYER_SOURCES_paths src/paths/ipc/*.cu)
  list(APPEND GDR_LAYER_SOURCES_transport src/transport/cuda_ipc/*.cc)
  list(APPEND GDR_LAYER_SOURCES_security src/security/*.cu)
endif()

set(GDR_LAYER_OBJECTS "")
foreach(name IN LISTS GDR_LAYER_NAMES)
  if(name STREQUAL "compat" OR name STREQUAL "sim" OR NOT GDR_LAYER_SOURCES_${name})
    continue()
  endif()
  file(GLOB srcs CONFIGURE_DEPENDS ${GDR_LAYER_SOURCES_${name}})
  add_library(gdr_layer_${name} OBJECT ${srcs})
  target_include_directories(gdr_layer_${name} PRIVATE ${GDR_LAYER_ROOT_${name}})
  target_link_libraries(gdr_layer_${name} PRIVATE gdr_layer_config)
  list(APPEND GDR_LAYER_OBJECTS $<TARGET_OBJECTS:gdr_layer_${name}>)
endforeach()

add_library(gdrcoll_static STATIC ${GDR_LAYER_OBJECTS})
set_target_properties(gdrcoll_static PROPERTIES LINKER_LANGUAGE CXX)
