# -DMAX_RSS_PORTABLE=ON: a max_rss that runs on other x86-64 glibc
# distributions than the one that built it. Its only shared libraries are then
# glibc's (libc, libm, the loader): libstdc++ and libgcc are linked in, and fmt
# is compiled in as headers, because Debian ships fmt only as libfmt.so.9
# (no static archive). spdlog is already header-only here and follows fmt.
# glibc itself stays shared (a static glibc breaks getpwnam and dlopen, and
# glibc is on every such system): the binary needs a glibc at least as new as
# the symbols it uses, which scripts/portable.sh prints.
#
# On by default, sanitizer builds aside (ASan wants the shared C++ runtime;
# the sanitized test build, tests/CMakeLists.txt, never links it in):
# measured side by side (2026-11-24), the dynamic loader's work for
# libstdc++, libgcc_s and libfmt took ~1 ms of every run's start
# (`max_rss --version` 3.2-3.5 -> 2.3 ms, /bin/true itself 2.2 ms), and
# their pages mapped by fault-around most of a MiB of max_rss's own peak
# (`max_rss -- /bin/true` 5.2 -> 4.7 MiB; 10,000 fork+exec children
# 8.6 -> 7.8 MiB; 10,000 alive at once 9.4 -> 8.5 MiB). What it costs is
# build time: fmt's implementation is compiled in each source that formats
# (a clean build with -j2 here 3m19s -> 4m18s; a precompiled header did not
# help: 4m32s). A distribution's package, which wants the shared libraries,
# sets it OFF.
if(MAX_RSS_SANITIZE OR CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  set(_max_rss_portable_default OFF)
else()
  set(_max_rss_portable_default ON)
endif()
option(MAX_RSS_PORTABLE "Link libstdc++, libgcc and fmt statically, for other glibc distributions"
       ${_max_rss_portable_default})

set(MAX_RSS_FMT fmt::fmt)
if(MAX_RSS_PORTABLE)
  set(MAX_RSS_FMT fmt::fmt-header-only)
  # Debian's spdlog targets name fmt::fmt, the shared library; point the
  # header-only one at header-only fmt too.
  set_property(TARGET spdlog::spdlog_header_only PROPERTY INTERFACE_LINK_LIBRARIES Threads::Threads
                                                                                  fmt::fmt-header-only)
endif()

# The C++ runtime linked in, on max_rss and the plain test binary; never on a
# sanitized one (ASan wants the shared C++ runtime).
function(max_rss_portable_link target)
  if(MAX_RSS_PORTABLE)
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  endif()
endfunction()
