# Run by cpack (CPACK_PRE_BUILD_SCRIPTS) on the staged files, before it builds
# a package. Debian's zsh has /usr/share/zsh/vendor-completions in $fpath, not
# /usr/share/zsh/site-functions (that is for zsh's own prefix, and
# /usr/local): in a .deb the completion must go there to be found.
if(CPACK_GENERATOR STREQUAL "DEB")
  file(GLOB_RECURSE staged LIST_DIRECTORIES false "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*/_max_rss")
  foreach(file IN LISTS staged)
    get_filename_component(dir "${file}" DIRECTORY)
    if(dir MATCHES "/share/zsh/site-functions$")
      string(REGEX REPLACE "/site-functions$" "/vendor-completions" target "${dir}")
      file(MAKE_DIRECTORY "${target}")
      file(RENAME "${file}" "${target}/_max_rss")
      file(GLOB left "${dir}/*")
      if(NOT left)
        file(REMOVE_RECURSE "${dir}")
      endif()
    endif()
  endforeach()
endif()
