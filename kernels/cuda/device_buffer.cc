#include "kernels/cuda/device_buffer.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <utility>

#include "kernels/cuda/cuda_check.h"

namespace rpt::kernels {

namespace {

struct DeviceCount {
  int count = 0;
  cudaError_t error = cudaSuccess;
};

DeviceCount query_device_count() {
  DeviceCount result;
  result.error = cudaGetDeviceCount(&result.count);
  if (result.error != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error of a machine without a driver
    result.count = 0;
  }
  return result;
}

}  // namespace

int cuda_device_count() { return query_device_count().count; }

std::string cuda_unavailable_reason() {
  const DeviceCount devices = query_device_count();
  if (devices.error != cudaSuccess) {
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorString(devices.error);
  }
  return devices.count == 0 ? "no CUDA device is visible" : "";
}

void set_current_device(int index) { RPT_CUDA_CHECK(cudaSetDevice(index)); }

std::string cuda_device_name(int index) {
  cudaDeviceProp properties{};
  RPT_CUDA_CHECK(cudaGetDeviceProperties(&properties, index));
  return properties.name;
}

CudaStreamOwner::CudaStreamOwner() {
  RPT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

CudaStreamOwner::~CudaStreamOwner() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

CudaStreamOwner::CudaStreamOwner(CudaStreamOwner&& other) noexcept
    : stream_(std::exchange(other.stream_, nullptr)) {}

CudaStreamOwner& CudaStreamOwner::operator=(CudaStreamOwner&& other) noexcept {
  std::swap(stream_, other.stream_);
  return *this;
}

void CudaStreamOwner::synchronize() const { RPT_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

namespace {

// Whether the current device has stream-ordered memory pools (cudaMallocAsync), asked once per
// device.
bool memory_pools_supported() {
  enum : int { kNotAsked = 0, kYes, kNo };
  static std::array<std::atomic<int>, 128> known{};  // zero: kNotAsked
  int device = 0;
  RPT_CUDA_CHECK(cudaGetDevice(&device));
  std::atomic<int>& entry = known.at(static_cast<std::size_t>(device));
  if (entry.load() == kNotAsked) {
    int supported = 0;
    RPT_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device));
    entry.store(supported != 0 ? kYes : kNo);
  }
  return entry.load() == kYes;
}

}  // namespace

void keep_freed_device_memory() {
  if (!memory_pools_supported()) return;
  int device = 0;
  RPT_CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPool_t pool = nullptr;
  RPT_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t threshold = UINT64_MAX;
  RPT_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
}

DeviceMemoryInfo device_memory_info() {
  DeviceMemoryInfo info;
  RPT_CUDA_CHECK(cudaMemGetInfo(&info.free_bytes, &info.total_bytes));
  return info;
}

DeviceMemoryReport device_memory_report() {
  DeviceMemoryReport report;
  const DeviceMemoryInfo info = device_memory_info();
  report.device_used_bytes = info.total_bytes - info.free_bytes;
  if (!memory_pools_supported()) return report;
  int device = 0;
  RPT_CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPool_t pool = nullptr;
  RPT_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  const auto attribute = [pool](cudaMemPoolAttr name) {
    std::uint64_t value = 0;
    RPT_CUDA_CHECK(cudaMemPoolGetAttribute(pool, name, &value));
    return static_cast<std::size_t>(value);
  };
  report.pool_reserved_bytes = attribute(cudaMemPoolAttrReservedMemCurrent);
  report.pool_reserved_peak_bytes = attribute(cudaMemPoolAttrReservedMemHigh);
  report.pool_used_peak_bytes = attribute(cudaMemPoolAttrUsedMemHigh);
  return report;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes, CudaStream stream, MemoryBudget* budget)
    : bytes_(bytes), stream_(stream), budget_(budget) {
  if (bytes == 0) return;
  if (budget_ != nullptr) budget_->reserve(bytes);
  pooled_ = memory_pools_supported();
  const cudaError_t status =
      pooled_ ? cudaMallocAsync(&data_, bytes, stream) : cudaMalloc(&data_, bytes);
  if (status != cudaSuccess) {
    if (budget_ != nullptr) budget_->release(bytes);
    cudaGetLastError();  // an out-of-memory allocation is not sticky; clear it
    if (status == cudaErrorMemoryAllocation) {
      RPT_THROW(ResourceExhausted, "out of device memory allocating ", bytes, " bytes");
    }
    RPT_CUDA_CHECK(status);
  }
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      stream_(other.stream_),
      budget_(std::exchange(other.budget_, nullptr)),
      pooled_(other.pooled_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    stream_ = other.stream_;
    budget_ = std::exchange(other.budget_, nullptr);
    pooled_ = other.pooled_;
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (data_ != nullptr) {
    if (pooled_) {
      cudaFreeAsync(data_, stream_);
    } else {
      cudaFree(data_);  // waits for the whole device: no kernel still reads the memory
    }
    if (budget_ != nullptr) budget_->release(bytes_);
  }
  data_ = nullptr;
  bytes_ = 0;
}

void DeviceBuffer::copy_from_host(const void* host, std::size_t bytes) {
  RPT_CHECK(bytes <= bytes_, InvalidArgument, "copy of ", bytes, " bytes into a buffer of ",
            bytes_);
  RPT_CUDA_CHECK(cudaMemcpyAsync(data_, host, bytes, cudaMemcpyHostToDevice, stream_));
  // Synchronous as documented: other streams may read the data as soon as this returns.
  RPT_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void DeviceBuffer::copy_to_host(void* host, std::size_t bytes) const {
  RPT_CHECK(bytes <= bytes_, InvalidArgument, "copy of ", bytes, " bytes from a buffer of ",
            bytes_);
  RPT_CUDA_CHECK(cudaMemcpyAsync(host, data_, bytes, cudaMemcpyDeviceToHost, stream_));
  RPT_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace rpt::kernels

namespace rpt::kernels {

void DeviceBuffer::copy_from_host_async(const void* host, std::size_t bytes, std::size_t offset) {
  RPT_CHECK(offset + bytes <= bytes_, InvalidArgument, "copy of ", bytes, " bytes at ", offset,
            " into a buffer of ", bytes_);
  if (bytes == 0) return;
  RPT_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(data_) + offset, host, bytes,
                                 cudaMemcpyHostToDevice, stream_));
}

void DeviceBuffer::copy_to_host_async(void* host, std::size_t bytes, std::size_t offset) const {
  RPT_CHECK(offset + bytes <= bytes_, InvalidArgument, "copy of ", bytes, " bytes at ", offset,
            " from a buffer of ", bytes_);
  if (bytes == 0) return;
  RPT_CUDA_CHECK(cudaMemcpyAsync(host, static_cast<const char*>(data_) + offset, bytes,
                                 cudaMemcpyDeviceToHost, stream_));
}

void DeviceBuffer::fill_zero() {
  if (bytes_ > 0) RPT_CUDA_CHECK(cudaMemsetAsync(data_, 0, bytes_, stream_));
}

void copy_device_async(void* destination, const void* source, std::size_t bytes,
                       CudaStream stream) {
  if (bytes == 0) return;
  RPT_CUDA_CHECK(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToDevice, stream));
}

void copy_host_to_device_async(void* device, const void* host, std::size_t bytes,
                               CudaStream stream) {
  if (bytes == 0) return;
  RPT_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
}

void copy_device_to_host_async(void* host, const void* device, std::size_t bytes,
                               CudaStream stream) {
  if (bytes == 0) return;
  RPT_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream));
}

void synchronize(CudaStream stream) { RPT_CUDA_CHECK(cudaStreamSynchronize(stream)); }

}  // namespace rpt::kernels
