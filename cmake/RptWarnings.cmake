# rpt_strict_warnings(target): warnings as errors, per target (never global, so third-party
# headers and generated code keep their own rules).
# The clang fuzzing build (RPT_BUILD_FUZZERS) shows warnings but does not fail on them: clang
# warns about other things than GCC, whose build enforces the rules.
function(rpt_strict_warnings target)
  set(werror -Werror)
  if(RPT_BUILD_FUZZERS)
    set(werror)
  endif()
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor ${werror}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
endfunction()
