# The eBPF backend (--backend ebpf). Built when clang, bpftool, libbpf and
# the kernel's BTF (for vmlinux.h) are there: MAX_RSS_EBPF=AUTO (default)
# builds it when it can and says so either way, ON requires it, OFF leaves
# it out. Without it, --backend ebpf says the backend was not built.
set(MAX_RSS_EBPF AUTO CACHE STRING "Build the eBPF backend: AUTO, ON or OFF")
set_property(CACHE MAX_RSS_EBPF PROPERTY STRINGS AUTO ON OFF)
set(_ebpf_dir ${CMAKE_CURRENT_LIST_DIR})
set(MAX_RSS_EBPF_SOURCE_DIR ${_ebpf_dir})
set(_ebpf_missing "")
if(MAX_RSS_EBPF STREQUAL "OFF")
  set(_ebpf_missing "MAX_RSS_EBPF=OFF")
else()
  find_program(MAX_RSS_BPF_CLANG NAMES clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14)
  find_program(MAX_RSS_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(LIBBPF QUIET IMPORTED_TARGET libbpf>=1.0)
  endif()
  set(MAX_RSS_VMLINUX_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH "Kernel BTF that vmlinux.h is generated from")
  if(NOT MAX_RSS_BPF_CLANG)
    list(APPEND _ebpf_missing "clang")
  endif()
  if(NOT MAX_RSS_BPFTOOL)
    list(APPEND _ebpf_missing "bpftool")
  endif()
  if(NOT LIBBPF_FOUND)
    list(APPEND _ebpf_missing "libbpf-dev (>= 1.0)")
  endif()
  if(NOT EXISTS ${MAX_RSS_VMLINUX_BTF})
    list(APPEND _ebpf_missing "kernel BTF at ${MAX_RSS_VMLINUX_BTF}")
  endif()
  if(_ebpf_missing AND MAX_RSS_EBPF STREQUAL "ON")
    message(FATAL_ERROR "MAX_RSS_EBPF=ON but missing: ${_ebpf_missing} (scripts/setup.sh installs them)")
  endif()
endif()

if(_ebpf_missing)
  string(REPLACE ";" ", " _ebpf_why "${_ebpf_missing}")
  message(STATUS "max_rss: eBPF backend not built (missing: ${_ebpf_why})")
  set(MAX_RSS_EBPF_WHY_MISSING "${_ebpf_why}")
  # Adds the backend's stand-in to one build of the library (max_rss_add_core).
  function(max_rss_add_ebpf target)
    target_sources(${target} PRIVATE ${MAX_RSS_EBPF_SOURCE_DIR}/ebpf_missing.cpp)
    target_compile_definitions(${target} PRIVATE MAX_RSS_EBPF_MISSING="${MAX_RSS_EBPF_WHY_MISSING}")
  endfunction()
  set(MAX_RSS_EBPF_BUILT OFF)
  return()
endif()

message(STATUS "max_rss: eBPF backend built (${MAX_RSS_BPF_CLANG}, ${MAX_RSS_BPFTOOL}, libbpf ${LIBBPF_VERSION})")
set(MAX_RSS_EBPF_BUILT ON)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(_bpf_arch x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(_bpf_arch arm64)
else()
  set(_bpf_arch ${CMAKE_SYSTEM_PROCESSOR})
endif()
set(_gen ${CMAKE_BINARY_DIR}/ebpf)
file(MAKE_DIRECTORY ${_gen})
add_custom_command(OUTPUT ${_gen}/vmlinux.h
  COMMAND ${MAX_RSS_BPFTOOL} btf dump file ${MAX_RSS_VMLINUX_BTF} format c > ${_gen}/vmlinux.h
  COMMENT "vmlinux.h from ${MAX_RSS_VMLINUX_BTF}" VERBATIM)
get_target_property(_libbpf_includes PkgConfig::LIBBPF INTERFACE_INCLUDE_DIRECTORIES)
set(_bpf_include_flags "")
foreach(dir ${_libbpf_includes})
  list(APPEND _bpf_include_flags -I${dir})
endforeach()
add_custom_command(OUTPUT ${_gen}/max_rss.bpf.o
  COMMAND ${MAX_RSS_BPF_CLANG} -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_${_bpf_arch}
          -I${_gen} -I${_ebpf_dir} ${_bpf_include_flags} -c ${_ebpf_dir}/max_rss.bpf.c -o ${_gen}/max_rss.bpf.o
  DEPENDS ${_ebpf_dir}/max_rss.bpf.c ${_ebpf_dir}/events.h ${_gen}/vmlinux.h
  COMMENT "BPF object max_rss.bpf.o" VERBATIM)
add_custom_command(OUTPUT ${_gen}/max_rss.skel.h
  COMMAND ${MAX_RSS_BPFTOOL} gen skeleton ${_gen}/max_rss.bpf.o name max_rss_bpf > ${_gen}/max_rss.skel.h
  DEPENDS ${_gen}/max_rss.bpf.o
  COMMENT "BPF skeleton max_rss.skel.h" VERBATIM)
# The same source without its fentry hooks, as a light skeleton (-L): a
# loader program relocates and attaches it in the kernel, without libbpf's
# user-space parse of the kernel's BTF (see light_loader.h).
add_custom_command(OUTPUT ${_gen}/max_rss_light.bpf.o
  COMMAND ${MAX_RSS_BPF_CLANG} -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_${_bpf_arch} -DMRSS_LIGHT
          -I${_gen} -I${_ebpf_dir} ${_bpf_include_flags} -c ${_ebpf_dir}/max_rss.bpf.c -o ${_gen}/max_rss_light.bpf.o
  DEPENDS ${_ebpf_dir}/max_rss.bpf.c ${_ebpf_dir}/events.h ${_gen}/vmlinux.h
  COMMENT "BPF object max_rss_light.bpf.o" VERBATIM)
add_custom_command(OUTPUT ${_gen}/max_rss_light.lskel.h
  COMMAND ${MAX_RSS_BPFTOOL} gen skeleton -L ${_gen}/max_rss_light.bpf.o name max_rss_light > ${_gen}/max_rss_light.lskel.h
  DEPENDS ${_gen}/max_rss_light.bpf.o
  COMMENT "BPF light skeleton max_rss_light.lskel.h" VERBATIM)
# One target generates the skeletons; each build of the library waits for it
# (an output listed in two targets' sources may be generated twice at once).
add_custom_target(max_rss_ebpf_skeletons DEPENDS ${_gen}/max_rss.skel.h ${_gen}/max_rss_light.lskel.h)
set(MAX_RSS_EBPF_GEN_DIR ${_gen})
# The tests reach the kernel side's interface (ebpf_program.hpp) directly.
set(MAX_RSS_HAVE_EBPF ON)
# Static libbpf, libelf and zlib where Debian ships them (libbpf-dev,
# libelf-dev, zlib1g-dev): three more shared libraries cost every run ~0.7 MiB
# of max_rss's own resident memory (their relocated data and symbol tables),
# whatever the backend; linked in, only the pages --backend ebpf uses are.
find_library(MAX_RSS_LIBBPF_A NAMES libbpf.a)
find_library(MAX_RSS_LIBELF_A NAMES libelf.a)
find_library(MAX_RSS_LIBZ_A NAMES libz.a)
set(MAX_RSS_LIBBPF_INCLUDES "${_libbpf_includes}")

# Adds the backend to one build of the library (max_rss_add_core): the plain
# one, and the sanitized one the tests also run.
function(max_rss_add_ebpf target)
  set(dir ${MAX_RSS_EBPF_SOURCE_DIR})
  set(gen ${MAX_RSS_EBPF_GEN_DIR})
  target_sources(${target} PRIVATE ${dir}/ebpf_backend.cpp ${dir}/ebpf_launch.cpp ${dir}/ebpf_program.cpp
                                   ${dir}/ebpf_load.cpp ${dir}/early_tracer.cpp
                                   ${dir}/light_loader.c)
  add_dependencies(${target} max_rss_ebpf_skeletons)
  target_include_directories(${target} PRIVATE ${gen})
  if(MAX_RSS_LIBBPF_A AND MAX_RSS_LIBELF_A AND MAX_RSS_LIBZ_A)
    if(MAX_RSS_LIBBPF_INCLUDES)
      target_include_directories(${target} PRIVATE ${MAX_RSS_LIBBPF_INCLUDES})
    endif()
    target_link_libraries(${target} PRIVATE ${MAX_RSS_LIBBPF_A} ${MAX_RSS_LIBELF_A} ${MAX_RSS_LIBZ_A})
  else()
    target_link_libraries(${target} PRIVATE PkgConfig::LIBBPF)
  endif()
endfunction()
