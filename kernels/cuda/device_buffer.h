// RAII owners for CUDA resources: a stream, a cuBLAS handle, and device memory allocated in
// stream order. All are move-only; destruction never throws (errors at teardown are dropped,
// the process may be exiting because the device is gone).
#pragma once

#include <cstddef>

#include "kernels/stream.h"

struct cublasContext;

namespace rpt::kernels {

// Number of visible CUDA devices; 0 when there is no driver or no device (never throws).
int cuda_device_count();

class CudaStreamOwner {
 public:
  CudaStreamOwner();
  ~CudaStreamOwner();
  CudaStreamOwner(CudaStreamOwner&& other) noexcept;
  CudaStreamOwner& operator=(CudaStreamOwner&& other) noexcept;
  CudaStreamOwner(const CudaStreamOwner&) = delete;
  CudaStreamOwner& operator=(const CudaStreamOwner&) = delete;

  CudaStream get() const { return stream_; }
  void synchronize() const;

 private:
  CudaStream stream_ = nullptr;
};

class CublasHandle {
 public:
  explicit CublasHandle(CudaStream stream);
  ~CublasHandle();
  CublasHandle(CublasHandle&& other) noexcept;
  CublasHandle& operator=(CublasHandle&& other) noexcept;
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  cublasContext* get() const { return handle_; }

 private:
  cublasContext* handle_ = nullptr;
};

// `bytes` of device memory from the stream-ordered pool of `stream`; freed in stream order.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t bytes, CudaStream stream);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }
  std::size_t bytes() const { return bytes_; }

  void copy_from_host(const void* host, std::size_t bytes);
  void copy_to_host(void* host, std::size_t bytes) const;

 private:
  void release() noexcept;

  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  CudaStream stream_ = nullptr;
};

}  // namespace rpt::kernels
