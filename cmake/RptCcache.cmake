# Compiles through ccache when it is installed (RPT_CCACHE=OFF: never). Besides rebuilds, this is
# what lets the container image's build stage (Dockerfile) reuse the objects of a build of the
# same sources in another directory: deploy/image/test.sh lends it the host's cache, read-only.
# The object of a source is the same whichever tree compiled it when the compile commands are the
# same once made relative to the source root (CCACHE_BASEDIR) and the compilers are the same
# binary (compiler_check content, not the file's date); the working directory stays out of the
# key (hash_dir false: it only reaches debug information, whose directory may then name the
# other tree). Depend mode reads the compiler's own -MD file instead of running the preprocessor
# first, so a build that finds nothing in the cache costs about what it costs without ccache.
option(RPT_CCACHE "Compile through ccache when it is installed" ON)
find_program(RPT_CCACHE_PROGRAM ccache)
if(RPT_CCACHE AND RPT_CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  # ccache keys on the locale variables too (they change the compiler's messages): one locale
  # for every compile, so that a build stage without LANG finds what a shell with LANG stored.
  set(CMAKE_CXX_COMPILER_LAUNCHER env -u LANG -u LC_CTYPE -u LC_MESSAGES LC_ALL=C.UTF-8
      CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=1 CCACHE_COMPILERCHECK=content
      CCACHE_DEPEND=1 ${RPT_CCACHE_PROGRAM})
endif()
