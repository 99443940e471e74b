# cmake/packaging.cmake: `make deb` (cpack -G DEB in the build directory) makes the Debian packages of the install
# tree, one per install component, split the way Debian splits a project:
#   component  package            contents
#   tools      ett                bin/ett, the manual pages (gzip -9n), the bash and fish completions
#   kernel     ett-kernel         the capture kernel and its GRUB ISO in lib/ett (Architecture: all: a guest image)
#   lib        libettprobeN       libettprobe.so.N (N: the library's SOVERSION), with a shlibs file
#   dev        libettprobe-dev    headers, libettprobe.so and .a, ettprobe.pc, the CMake package, the Perfetto schema
#   python     python3-ett        the Python package ett (only when the target ett_python exists)
# The packages of ELF files get a -dbgsym package (.ddeb) with their debug information: CPack splits it out with
# objcopy and strips the files it packages. Each package has its copyright and changelog.Debian.gz in
# usr/share/doc/PACKAGE (packaging/), and the lintian overrides of packaging/PACKAGE.lintian-overrides with their
# reasons. packaging/deb-fixups.cmake mends what CPack does in a way lintian rejects (it says what). The version is the project's and the Debian revision is the one the first
# entry of packaging/changelog names. tests/install/deb_test.sh builds them, runs lintian and uses them.
include(GNUInstallDirs)
set(ETT_PACKAGING_DIR "${CMAKE_SOURCE_DIR}/packaging")

# The Debian revision from packaging/changelog, whose upstream version must be the project's.
file(STRINGS "${ETT_PACKAGING_DIR}/changelog" ett_changelog_head LIMIT_COUNT 1)
if(NOT ett_changelog_head MATCHES "^ett \\(([^-]+)-([^)]+)\\)")
  message(FATAL_ERROR "packaging/changelog: the first line is not `ett (VERSION-REVISION) ...`")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL PROJECT_VERSION)
  message(FATAL_ERROR "packaging/changelog: its latest entry is for version ${CMAKE_MATCH_1}, the project is "
                      "${PROJECT_VERSION}: add an entry for ${PROJECT_VERSION}")
endif()
set(ETT_DEBIAN_REVISION "${CMAKE_MATCH_2}")

get_target_property(ETT_PROBE_SOVERSION ettprobe_shared SOVERSION)
set(ETT_COMPONENTS tools kernel lib dev)
set(ETT_PACKAGE_tools ett)
set(ETT_PACKAGE_kernel ett-kernel)
set(ETT_PACKAGE_lib "libettprobe${ETT_PROBE_SOVERSION}")
set(ETT_PACKAGE_dev libettprobe-dev)
if(TARGET ett_python)
  list(APPEND ETT_COMPONENTS python)
  set(ETT_PACKAGE_python python3-ett)
endif()
if(NOT ETT_KERNEL)
  list(REMOVE_ITEM ETT_COMPONENTS kernel)
endif()

# The Perfetto trace schema that `ett export --format perfetto` writes, for programs that read those traces.
install(FILES "${CMAKE_SOURCE_DIR}/host-tools/export/perfetto_trace.proto" DESTINATION ${CMAKE_INSTALL_DATADIR}/ett
  COMPONENT dev)

# copyright and changelog.Debian.gz (gzip -9n: no name, no time stamp) in each package's doc directory: in the
# packages only, not in `make install`.
set(ett_changelog_gz "${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz")
add_custom_command(OUTPUT "${ett_changelog_gz}"
  COMMAND "${ETT_GZIP}" -9n -c "${ETT_PACKAGING_DIR}/changelog" > "${ett_changelog_gz}"
  DEPENDS "${ETT_PACKAGING_DIR}/changelog" COMMENT "Compressing the Debian changelog")
add_custom_target(ett_debian_changelog ALL DEPENDS "${ett_changelog_gz}")
foreach(component IN LISTS ETT_COMPONENTS)
  set(package "${ETT_PACKAGE_${component}}")
  install(FILES "${ETT_PACKAGING_DIR}/copyright" "${ett_changelog_gz}"
    DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${component} EXCLUDE_FROM_ALL)
  # Its lintian overrides: those of every package (packaging/lintian-overrides), then its own.
  file(READ "${ETT_PACKAGING_DIR}/lintian-overrides" overrides)
  if(EXISTS "${ETT_PACKAGING_DIR}/${package}.lintian-overrides")
    file(READ "${ETT_PACKAGING_DIR}/${package}.lintian-overrides" own_overrides)
    string(APPEND overrides "${own_overrides}")
  endif()
  file(CONFIGURE OUTPUT "${CMAKE_BINARY_DIR}/packaging/lintian/${package}" CONTENT "${overrides}")
  install(FILES "${CMAKE_BINARY_DIR}/packaging/lintian/${package}"
    DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides COMPONENT ${component} EXCLUDE_FROM_ALL)
  string(TOUPPER "${component}" upper)
  set(CPACK_DEBIAN_${upper}_PACKAGE_NAME "${package}")
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ett)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_DEBIAN_PACKAGE_RELEASE "${ETT_DEBIAN_REVISION}")
set(CPACK_PACKAGE_CONTACT "ETT maintainers <maintainers@users.noreply.a-seed-4734f03c.example>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${ETT_COMPONENTS})
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(ett_deb_version "${PROJECT_VERSION}-${ETT_DEBIAN_REVISION}")

set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION science)
set(CPACK_DEBIAN_TOOLS_DEBUGINFO_PACKAGE ON)
set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS "ett-kernel (= ${ett_deb_version}), qemu-system-x86, ovmf")
set(CPACK_DEBIAN_TOOLS_PACKAGE_SUGGESTS "postgresql")
set(CPACK_DEBIAN_TOOLS_DESCRIPTION "Event Timestamping Toolkit host tools
The ett command boots the ETT capture kernel under QEMU or on a test machine,
reads the timestamped events it records, stores them in SQLite or PostgreSQL,
analyses them and exports them as CSV, VCD, Perfetto traces and HTML reports.
.
Analysis and export need neither QEMU nor the capture kernel: the ett-kernel
package and QEMU are recommended for capturing, PostgreSQL is suggested.")

set(CPACK_DEBIAN_KERNEL_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_KERNEL_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_KERNEL_PACKAGE_RECOMMENDS "ett")
set(CPACK_DEBIAN_KERNEL_DESCRIPTION "Event Timestamping Toolkit capture kernel
The bare-metal i686 kernel that timestamps events on a test machine, and its
bootable GRUB ISO, in the place where the ett command looks for them. It runs
as the guest of QEMU or on the test machine itself, never on the host.")

set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_DEBUGINFO_PACKAGE ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON) # for every package, but only libettprobeN has a library with a soname
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_LIB_DESCRIPTION "Event Timestamping Toolkit probe client library
libettprobe sends signal codes on the probe lines of the Event Timestamping
Toolkit, from a program under test to the capture kernel that timestamps them.
.
This package contains the shared library.")

set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${ETT_PACKAGE_lib} (= ${ett_deb_version})")
set(CPACK_DEBIAN_DEV_DESCRIPTION "Event Timestamping Toolkit probe client library (development files)
libettprobe sends signal codes on the probe lines of the Event Timestamping
Toolkit, from a program under test to the capture kernel that timestamps them.
.
This package contains the C and C++ headers, the static library, the
pkg-config file, the CMake package (find_package(ettprobe)) and the protobuf
schema of the Perfetto traces that ett writes.")

set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
set(CPACK_DEBIAN_PYTHON_DEBUGINFO_PACKAGE ON)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3, python3-numpy")
set(CPACK_DEBIAN_PYTHON_DESCRIPTION "Event Timestamping Toolkit Python package
The Python package ett reads the captures of the Event Timestamping Toolkit
and runs its analyses, with the results as numpy arrays and pandas frames.")
set(CPACK_POST_BUILD_SCRIPTS "${ETT_PACKAGING_DIR}/deb-fixups.cmake")
include(CPack)
