#include "kernels/cuda/device_buffer.h"

#include <utility>

#include "kernels/cuda/cuda_check.h"

namespace rpt::kernels {

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error of a machine without a driver
    return 0;
  }
  return count;
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

CublasHandle::CublasHandle(CudaStream stream) {
  RPT_CUBLAS_CHECK(cublasCreate(&handle_));
  RPT_CUBLAS_CHECK(cublasSetStream(handle_, stream));
}

CublasHandle::~CublasHandle() {
  if (handle_ != nullptr) cublasDestroy(handle_);
}

CublasHandle::CublasHandle(CublasHandle&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)) {}

CublasHandle& CublasHandle::operator=(CublasHandle&& other) noexcept {
  std::swap(handle_, other.handle_);
  return *this;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes, CudaStream stream) : bytes_(bytes), stream_(stream) {
  if (bytes > 0) RPT_CUDA_CHECK(cudaMallocAsync(&data_, bytes, stream));
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      stream_(other.stream_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    stream_ = other.stream_;
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (data_ != nullptr) cudaFreeAsync(data_, stream_);
  data_ = nullptr;
  bytes_ = 0;
}

void DeviceBuffer::copy_from_host(const void* host, std::size_t bytes) {
  RPT_CHECK(bytes <= bytes_, InvalidArgument, "copy of ", bytes, " bytes into a buffer of ",
            bytes_);
  RPT_CUDA_CHECK(cudaMemcpyAsync(data_, host, bytes, cudaMemcpyHostToDevice, stream_));
}

void DeviceBuffer::copy_to_host(void* host, std::size_t bytes) const {
  RPT_CHECK(bytes <= bytes_, InvalidArgument, "copy of ", bytes, " bytes from a buffer of ",
            bytes_);
  RPT_CUDA_CHECK(cudaMemcpyAsync(host, data_, bytes, cudaMemcpyDeviceToHost, stream_));
  RPT_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace rpt::kernels
