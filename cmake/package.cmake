# The Debian package: `cpack -G DEB` in the build directory (after the build)
# writes max-rss_<version>_<arch>.deb. Its dependencies are computed from the
# binary by dpkg-shlibdeps (package dpkg-dev).
set(CPACK_PACKAGE_NAME max-rss)  # Debian package names allow no '_'
set(CPACK_PACKAGE_VENDOR "max_rss developers")
set(MAX_RSS_PACKAGE_CONTACT "max_rss maintainers <maintainers@users.noreply.a-seed-a40b8e08.example>"
    CACHE STRING "The Maintainer field of the .deb: Name <email>")
set(CPACK_PACKAGE_CONTACT "${MAX_RSS_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "true peak memory of a program and its whole process tree")
set(CPACK_PACKAGE_DESCRIPTION
    "max_rss runs a program under ptrace, follows every fork, clone and exec, reads each
process's true peak (VmHWM) when it execs and exits, and watches the live tree to
find what it held at once, shared pages counted once. It reports this beside what
wait4's ru_maxrss (GNU time, hyperfine) would say. 'max_rss bench' measures several
commands over several runs and exports the results; 'max_rss compare' fails a CI
job when a peak grew.")
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)  # the build keeps its debug info; the package needs none
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # max-rss_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
# Files are root-owned with normal modes, whatever the umask of the builder.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# cpack would otherwise build every target first (the tests too): it packages
# the build as it is, and `cmake --install` never builds anyway.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/deb_layout.cmake)

include(CPack)
