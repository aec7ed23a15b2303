# Finds protobuf and gRPC for the folder that includes it (imported targets are folder-scoped,
# so proto/, server/, client/ and tests/server/ each include this file).
#
# Why not gRPC's CMake package: its gRPC::grpc++ target drags in the shared libprotobuf, and a
# process that also loads Debian's libsentencepiece (which exports its own, older protobuf-lite
# 3.14 under the same symbol names) crashes at start-up, whichever library comes first. The engine
# needs sentencepiece, so rpt-server links protobuf statically and exports none of its symbols
# (see server/CMakeLists.txt). pkg-config's grpc++ does not pull protobuf in; libgrpc++ itself
# does not need it.
#
# Sets:
#   PkgConfig::GRPCPP          libgrpc++ and its dependencies, without protobuf
#   RPT_PROTOBUF_SHARED        the shared libprotobuf (clients and tests, which do not load the engine)
#   RPT_PROTOBUF_STATIC        libprotobuf.a (rpt-server)
#   RPT_GRPC_REFLECTION_STATIC libgrpc++_reflection.a (its shared build needs the shared libprotobuf)
#   RPT_GRPC_CPP_PLUGIN        protoc's gRPC C++ plugin
find_package(Protobuf REQUIRED)
pkg_check_modules(GRPCPP REQUIRED IMPORTED_TARGET grpc++)
set(RPT_PROTOBUF_SHARED protobuf::libprotobuf)
find_library(RPT_PROTOBUF_STATIC NAMES libprotobuf.a REQUIRED)
find_library(RPT_GRPC_REFLECTION_STATIC NAMES libgrpc++_reflection.a REQUIRED)
find_program(RPT_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)

# rpt_hide_static_protobuf(target): keeps the static protobuf's symbols (and gRPC reflection's)
# out of an executable's dynamic symbol table, for executables that also load the engine's
# sentencepiece (see server/CMakeLists.txt). Every archive's in ordinary builds; only those two
# in the clang sanitizer build (RPT_BUILD_FUZZERS), which links ASan's runtime as an archive
# too: hiding its malloc interceptors would let glibc free ASan's blocks.
function(rpt_hide_static_protobuf target)
  if(RPT_BUILD_FUZZERS)
    target_link_options(${target} PRIVATE
                        "LINKER:--exclude-libs=libprotobuf.a:libgrpc++_reflection.a")
  else()
    target_link_options(${target} PRIVATE "LINKER:--exclude-libs,ALL")
  endif()
endfunction()
