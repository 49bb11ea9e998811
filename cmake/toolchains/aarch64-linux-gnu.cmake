# Cross build for 64-bit ARM Linux with Debian's cross compiler (g++-aarch64-linux-gnu) and the arm64 libraries of
# a multiarch install (scripts/install-deps.sh aarch64). Tests run under qemu-user: CMake prefixes every test
# command (and gtest_discover_tests' listing run) with the emulator, which finds the arm64 loader and libraries
# under /usr/aarch64-linux-gnu.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static;-L;/usr/aarch64-linux-gnu)
# Statically linked: under Debian 12's qemu-user 7.2 a dynamically linked binary whose threads hand work to each
# other (ThreadPool) spins forever in the emulator, while the same code linked statically runs.
set(CMAKE_EXE_LINKER_FLAGS_INIT -static)
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)  # so pkg-config's PCRE2 resolves to its static archive
# Headers-only packages (nlohmann-json, CLI11, Boost) install their CMake files for every architecture; libraries
# are taken from the arm64 multiarch directories only.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
