// Reader of model.bin (docs/model-format.md): memory-maps the file, validates the header and
// every tensor, and hands out zero-copy tensor views that keep the mapping alive.
//
// Thread safety: immutable after construction; share freely.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/tensor.h"

namespace rpt {

inline constexpr std::uint32_t kWeightsFormatVersion = 1;

struct WeightsFileOptions {
  // Verify the CRC-32 of every tensor's bytes (a cost that grows with the file: docs/PERFORMANCE.md
  // "Figures moved from source comments"); the header CRC, bounds and sizes are always checked.
  bool verify_checksums = true;
};

class WeightsFile {
 public:
  // Throws ModelError naming `path` if the file is missing, not a weights file, of a newer
  // format version, truncated, or fails a checksum.
  explicit WeightsFile(const std::string& path, const WeightsFileOptions& options = {});

  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  // The named tensor as stored (dtype of the file); throws ModelError when absent.
  Tensor get(const std::string& name) const;
  // Lets the named tensor's stored bytes leave resident memory (a loader that has converted
  // them); they stay readable. Throws ModelError when absent.
  void release(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::string& path() const { return path_; }
  // Wall seconds the constructor spent on tensor checksums, and on all else (mapping, header).
  double checksum_seconds() const { return checksum_seconds_; }
  double map_seconds() const { return map_seconds_; }

 private:
  std::string path_;
  std::shared_ptr<const void> mapping_;  // the whole file, read-only
  std::size_t file_size_ = 0;
  double checksum_seconds_ = 0.0;
  double map_seconds_ = 0.0;
  struct Stored {
    Tensor tensor;
    std::size_t offset = 0;  // of its bytes in the file
  };
  std::map<std::string, Stored> tensors_;
};

}  // namespace rpt
