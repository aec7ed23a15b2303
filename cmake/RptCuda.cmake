# Decides RPT_CUDA_ENABLED from RPT_WITH_CUDA and enables the CUDA language when it is on.
include(CheckLanguage)
set(RPT_CUDA_ENABLED OFF)
if(RPT_WITH_CUDA STREQUAL "AUTO")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(RPT_CUDA_ENABLED ON)
  endif()
elseif(RPT_WITH_CUDA)
  set(RPT_CUDA_ENABLED ON)
endif()

if(RPT_CUDA_ENABLED)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    # A100 (80), A10/A40 (86), L4/L40 (89): machine code; H100/H200 (90): machine code + PTX so
    # newer GPUs can JIT it.
    set(CMAKE_CUDA_ARCHITECTURES "80-real;86-real;89-real;90")
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 does not know nvcc's C++20 flag
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  message(STATUS "rpt: CUDA engine ON (architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "rpt: CUDA engine OFF (RPT_WITH_CUDA=${RPT_WITH_CUDA})")
endif()
