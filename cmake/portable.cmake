# -DMAX_RSS_PORTABLE=ON: a max_rss that runs on other x86-64 glibc
# distributions than the one that built it. Its only shared libraries are then
# glibc's (libc, libm, the loader): libstdc++ and libgcc are linked in, and fmt
# is compiled in as headers, because Debian ships fmt only as libfmt.so.9
# (no static archive). spdlog is already header-only here and follows fmt.
# glibc itself stays shared (a static glibc breaks getpwnam and dlopen, and
# glibc is on every such system): the binary needs a glibc at least as new as
# the symbols it uses, which scripts/portable.sh prints.
option(MAX_RSS_PORTABLE "Link libstdc++, libgcc and fmt statically, for other glibc distributions" OFF)

set(MAX_RSS_FMT fmt::fmt)
if(MAX_RSS_PORTABLE)
  set(MAX_RSS_FMT fmt::fmt-header-only)
  # Debian's spdlog targets name fmt::fmt, the shared library; point the
  # header-only one at header-only fmt too.
  set_property(TARGET spdlog::spdlog_header_only PROPERTY INTERFACE_LINK_LIBRARIES Threads::Threads
                                                                                  fmt::fmt-header-only)
  add_link_options($<$<LINK_LANGUAGE:CXX>:-static-libstdc++> $<$<LINK_LANGUAGE:CXX>:-static-libgcc>)
endif()
