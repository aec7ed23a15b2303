// RAII owners for CUDA resources: a stream and device memory allocated in stream order (the
// cuBLAS handle: cublas_handle.h). All are move-only; destruction never throws (errors at teardown
// are dropped, the process may be exiting because the device is gone).
#pragma once

#include <cstddef>
#include <string>

#include "kernels/memory_budget.h"
#include "kernels/stream.h"

namespace rpt::kernels {

// Number of visible CUDA devices; 0 when there is no driver or no device (never throws).
int cuda_device_count();
// Why no CUDA device can be used, e.g. "cudaGetDeviceCount: CUDA driver version is insufficient
// for CUDA runtime version"; empty when one can (never throws).
std::string cuda_unavailable_reason();
// Makes device `index` current for the calling thread (CUDA's current device is per thread).
void set_current_device(int index);
// The device's name, e.g. "NVIDIA H100 80GB HBM3".
std::string cuda_device_name(int index);

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

// Makes the current device's default memory pool keep freed memory (instead of returning it to
// the driver at every synchronisation), which turns cudaMallocAsync into a caching allocator.
// Does nothing where the device has no stream-ordered memory pools (some virtualised GPUs);
// DeviceBuffer then falls back to cudaMalloc/cudaFree.
void keep_freed_device_memory();

// Bytes free and in total on the current device (cudaMemGetInfo).
struct DeviceMemoryInfo {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
};
DeviceMemoryInfo device_memory_info();

// The driver's and the current device's default pool's view, for reports beside an engine's own
// count: bytes in use on the device by every process (total - free), and the pool's reserved
// bytes now and at their highest, and its highest in use (cudaMemPoolAttr*; zeros where the
// device has no pools). What the pool reserved past what was in use is fragmentation.
struct DeviceMemoryReport {
  std::size_t device_used_bytes = 0;
  std::size_t pool_reserved_bytes = 0;
  std::size_t pool_reserved_peak_bytes = 0;
  std::size_t pool_used_peak_bytes = 0;
};
DeviceMemoryReport device_memory_report();

// `bytes` of device memory from the stream-ordered pool of `stream`; freed in stream order
// (cudaMalloc and a device-synchronising cudaFree where the device has no memory pools).
// With a budget, the bytes are charged to it for the buffer's lifetime (the budget must outlive
// the buffer).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t bytes, CudaStream stream, MemoryBudget* budget = nullptr);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }

  CudaStream stream() const { return stream_; }

  // Synchronous copies (they wait for the stream).
  void copy_from_host(const void* host, std::size_t bytes);
  void copy_to_host(void* host, std::size_t bytes) const;
  // Stream-ordered copies; the host memory must stay valid until the stream passes them.
  void copy_from_host_async(const void* host, std::size_t bytes, std::size_t offset = 0);
  void copy_to_host_async(void* host, std::size_t bytes, std::size_t offset = 0) const;
  void fill_zero();

 private:
  void release() noexcept;

  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  CudaStream stream_ = nullptr;
  MemoryBudget* budget_ = nullptr;
  bool pooled_ = true;  // cudaMallocAsync; false where the device has no memory pools
};

// Stream-ordered copies of `bytes`; host memory must stay valid until the stream passes them.
void copy_device_async(void* destination, const void* source, std::size_t bytes, CudaStream stream);
void copy_host_to_device_async(void* device, const void* host, std::size_t bytes,
                               CudaStream stream);
void copy_device_to_host_async(void* host, const void* device, std::size_t bytes,
                               CudaStream stream);
// Waits for everything issued on `stream`; errors of earlier launches surface here.
void synchronize(CudaStream stream);

}  // namespace rpt::kernels
