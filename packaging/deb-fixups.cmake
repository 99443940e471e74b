# packaging/deb-fixups.cmake: CPACK_POST_BUILD_SCRIPTS of `make deb` (cmake/packaging.cmake). Three things CPack's
# DEB generator (CMake 3.25) does in a way lintian rejects are done again in the packages it made, with dpkg-deb:
# - a -dbgsym package's md5sums names its files by their absolute path in CPack's staging directory
#   (md5sums-lists-nonexistent-file): written again with the paths in the package;
# - a -dbgsym package has no copyright and changelog (no-copyright-file, no-changelog): its doc directory is made
#   the symbolic link to its package's that Debian's own dbgsym packages have (usr/share/doc/P-dbgsym -> P, allowed
#   because it depends on P of the same version), and its debug files are not executable;
# - a shared library's package calls ldconfig from postinst and postrm (maintscript-calls-ldconfig,
#   lacks-ldconfig-trigger): the scripts are replaced by the trigger file Debian uses, `activate-noawait ldconfig`.
foreach(package_file IN LISTS CPACK_PACKAGE_FILES)
  set(root "${package_file}.d")
  file(REMOVE_RECURSE "${root}")
  execute_process(COMMAND dpkg-deb -R "${package_file}" "${root}" COMMAND_ERROR_IS_FATAL ANY)
  set(changed FALSE)
  if(package_file MATCHES "\\.ddeb$")
    file(STRINGS "${root}/DEBIAN/control" depends REGEX "^Depends: ")
    file(STRINGS "${root}/DEBIAN/control" name REGEX "^Package: ")
    string(REGEX REPLACE "^Depends: ([^ ]+) .*" "\\1" parent "${depends}")
    string(REGEX REPLACE "^Package: " "" name "${name}")
    file(MAKE_DIRECTORY "${root}/usr/share/doc")
    file(CREATE_LINK "${parent}" "${root}/usr/share/doc/${name}" SYMBOLIC)
    file(GLOB_RECURSE debug_files RELATIVE "${root}" "${root}/usr/*")
    set(md5sums "")
    foreach(debug_file IN LISTS debug_files)
      if(IS_SYMLINK "${root}/${debug_file}")
        continue()
      endif()
      file(CHMOD "${root}/${debug_file}" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
      file(MD5 "${root}/${debug_file}" sum)
      string(APPEND md5sums "${sum}  ${debug_file}\n")
    endforeach()
    file(WRITE "${root}/DEBIAN/md5sums" "${md5sums}")
    set(changed TRUE)
  endif()
  if(EXISTS "${root}/DEBIAN/postinst")
    file(READ "${root}/DEBIAN/postinst" postinst)
    file(READ "${root}/DEBIAN/postrm" postrm)
    string(REGEX REPLACE "[ \t\n]+" " " postinst "${postinst}")
    string(REGEX REPLACE "[ \t\n]+" " " postrm "${postrm}")
    if(postinst STREQUAL "#!/bin/sh set -e if [ \"$1\" = \"configure\" ]; then ldconfig fi "
       AND postrm STREQUAL "#!/bin/sh set -e if [ \"$1\" = \"remove\" ]; then ldconfig fi ")
      file(REMOVE "${root}/DEBIAN/postinst" "${root}/DEBIAN/postrm")
      file(WRITE "${root}/DEBIAN/triggers" "activate-noawait ldconfig\n")
      set(changed TRUE)
    endif()
  endif()
  if(changed)
    execute_process(COMMAND dpkg-deb --root-owner-group -Zgzip --build "${root}" "${package_file}"
      OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
  endif()
  file(REMOVE_RECURSE "${root}")
endforeach()
