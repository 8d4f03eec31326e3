# What `cmake --install build --prefix P` puts under P: the program, its man
# page, and its bash, zsh and fish completions, each where that tool looks for
# it by default.
include(GNUInstallDirs)

install(TARGETS max_rss RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# man/max_rss.1.in is plain roff; the build fills in the version and gzips it
# (-n: no name or time stamp inside, so the same source gives the same bytes).
configure_file(${PROJECT_SOURCE_DIR}/man/max_rss.1.in ${PROJECT_BINARY_DIR}/man/max_rss.1 @ONLY)
add_custom_command(
  OUTPUT ${PROJECT_BINARY_DIR}/man/max_rss.1.gz
  COMMAND gzip -9 -n -f -k ${PROJECT_BINARY_DIR}/man/max_rss.1
  DEPENDS ${PROJECT_BINARY_DIR}/man/max_rss.1
  COMMENT "Compressing the man page max_rss(1)")
add_custom_target(max_rss_man DEPENDS ${PROJECT_BINARY_DIR}/man/max_rss.1.gz)
# Built with the program, so that any build that has bin/max_rss can install.
add_dependencies(max_rss max_rss_man)
install(FILES ${PROJECT_BINARY_DIR}/man/max_rss.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

install(FILES ${PROJECT_SOURCE_DIR}/completions/max_rss.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME max_rss)
# zsh's own default: $prefix/share/zsh/site-functions is in $fpath for a zsh
# built with that prefix, and /usr/local/share/zsh/site-functions is in
# Debian's. (The .deb moves it to Debian's /usr/share/zsh/vendor-completions:
# cmake/deb_layout.cmake.)
install(FILES ${PROJECT_SOURCE_DIR}/completions/_max_rss DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
install(FILES ${PROJECT_SOURCE_DIR}/completions/max_rss.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
