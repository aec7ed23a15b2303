#include "kernels/cuda/cuda_graph.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <utility>

#include "kernels/cuda/cuda_check.h"

namespace rpt::kernels {
namespace {

struct GraphDeleter {
  void operator()(cudaGraph_t graph) const { cudaGraphDestroy(graph); }
};
using OwnedGraph = std::unique_ptr<CUgraph_st, GraphDeleter>;

// Ends the capture on `stream` whatever happens in between (an exception from the captured
// work leaves the stream capturing otherwise, and every later call on it would fail).
class CaptureScope {
 public:
  explicit CaptureScope(cudaStream_t stream) : stream_(stream) {
    RPT_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  }
  ~CaptureScope() {
    if (!ended_) {
      cudaGraph_t abandoned = nullptr;
      cudaStreamEndCapture(stream_, &abandoned);
      if (abandoned != nullptr) cudaGraphDestroy(abandoned);
      cudaGetLastError();  // the abandoned capture's error is not the next call's
    }
  }
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

  OwnedGraph end() {
    ended_ = true;
    cudaGraph_t graph = nullptr;
    const cudaError_t status = cudaStreamEndCapture(stream_, &graph);
    OwnedGraph owned(graph);
    if (status != cudaSuccess) cudaGetLastError();
    RPT_CHECK(status == cudaSuccess, RuntimeFailure,
              "CUDA graph capture failed: ", cudaGetErrorName(status), ": ",
              cudaGetErrorString(status));
    return owned;
  }

 private:
  cudaStream_t stream_;
  bool ended_ = false;
};

}  // namespace

CudaGraph::~CudaGraph() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
}

CudaGraph::CudaGraph(CudaGraph&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}

CudaGraph& CudaGraph::operator=(CudaGraph&& other) noexcept {
  std::swap(exec_, other.exec_);
  return *this;
}

CudaGraph CudaGraph::capture(CudaStream stream, const std::function<void()>& work) {
  OwnedGraph graph;
  {
    CaptureScope scope(stream);
    work();
    graph = scope.end();
  }
  CudaGraph result;
  const cudaError_t status = cudaGraphInstantiate(&result.exec_, graph.get(), 0);
  if (status != cudaSuccess) {
    cudaGetLastError();
    result.exec_ = nullptr;
    RPT_THROW(RuntimeFailure, "CUDA graph instantiation failed: ", cudaGetErrorName(status), ": ",
              cudaGetErrorString(status));
  }
  return result;
}

void CudaGraph::launch(CudaStream stream) const {
  RPT_CHECK(exec_ != nullptr, InvalidArgument, "launch of an empty CUDA graph");
  RPT_CUDA_CHECK(cudaGraphLaunch(exec_, stream));
}

}  // namespace rpt::kernels
