#include "engine/weights_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

#include "engine/load_phases.h"
#include "kernels/errors.h"

namespace rpt {
namespace {

constexpr char kMagic[4] = {'R', 'P', 'T', 'W'};
constexpr std::size_t kPreambleSize = 24;
constexpr std::size_t kTensorAlignment = 64;

template <typename T>
T read_le(const unsigned char* bytes) {
  T value{};
  std::memcpy(&value, bytes, sizeof(T));  // x86-64 and aarch64 are little-endian
  return value;
}

std::uint32_t crc32_of(const void* data, std::size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* bytes = static_cast<const Bytef*>(data);
  while (size > 0) {  // zlib takes uInt lengths
    const uInt chunk = static_cast<uInt>(std::min<std::size_t>(size, 1u << 30));
    crc = crc32(crc, bytes, chunk);
    bytes += chunk;
    size -= chunk;
  }
  return static_cast<std::uint32_t>(crc);
}

// Maps `path` read-only; the returned pointer unmaps when its last owner goes away.
std::shared_ptr<const void> map_file(const std::string& path, std::size_t* size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  RPT_CHECK(fd >= 0, ModelError, "cannot open weights file ", path, ": ", std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    RPT_THROW(ModelError, "cannot stat weights file ", path);
  }
  *size = static_cast<std::size_t>(info.st_size);
  if (*size < kPreambleSize) {
    ::close(fd);
    RPT_THROW(ModelError, "weights file ", path, " is truncated (", *size, " bytes)");
  }
  void* address = ::mmap(nullptr, *size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  RPT_CHECK(address != MAP_FAILED, ModelError, "cannot map weights file ", path, ": ",
            std::strerror(errno));
  const std::size_t length = *size;
  return std::shared_ptr<const void>(
      address, [length](const void* p) { ::munmap(const_cast<void*>(p), length); });
}

// Drops the mapping's pages over [data, data + bytes) from the process's resident memory. They
// stay valid: the mapping is read-only, so a later read faults them back in from the file.
void release_pages(const void* data, std::size_t bytes) {
  static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(data) / page * page;
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes + page - 1) / page * page;
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);  // advice: may fail
}

}  // namespace

WeightsFile::WeightsFile(const std::string& path, const WeightsFileOptions& options) : path_(path) {
  const auto start = std::chrono::steady_clock::now();
  mapping_ = map_file(path, &file_size_);
  const auto* base = static_cast<const unsigned char*>(mapping_.get());

  RPT_CHECK(std::memcmp(base, kMagic, sizeof(kMagic)) == 0, ModelError, "weights file ", path,
            " is not an rpt weights file (bad magic)");
  const auto version = read_le<std::uint32_t>(base + 4);
  RPT_CHECK(version <= kWeightsFormatVersion, ModelError, "weights file ", path,
            " has format version ", version, ", newer than this build supports (",
            kWeightsFormatVersion, "); upgrade rpt");
  RPT_CHECK(version >= 1, ModelError, "weights file ", path, " has invalid version 0");
  const auto header_size = read_le<std::uint64_t>(base + 8);
  const auto header_crc = read_le<std::uint32_t>(base + 16);
  RPT_CHECK(header_size <= file_size_ - kPreambleSize, ModelError, "weights file ", path,
            " is truncated: header of ", header_size, " bytes does not fit in ", file_size_);
  RPT_CHECK(crc32_of(base + kPreambleSize, header_size) == header_crc, ModelError, "weights file ",
            path, " is corrupt: header checksum mismatch");

  nlohmann::json header;
  try {
    header = nlohmann::json::parse(base + kPreambleSize, base + kPreambleSize + header_size);
    for (const auto& entry : header.at("tensors")) {
      const auto name = entry.at("name").get<std::string>();
      const DataType dtype = parse_dtype(entry.at("dtype").get<std::string>());
      const auto shape = entry.at("shape").get<Shape>();
      const auto offset = entry.at("offset").get<std::uint64_t>();
      const auto nbytes = entry.at("nbytes").get<std::uint64_t>();
      const auto crc = entry.at("crc32").get<std::uint32_t>();

      RPT_CHECK(offset % kTensorAlignment == 0, ModelError, "weights file ", path, ": tensor ",
                name, " is not 64-byte aligned");
      RPT_CHECK(offset >= kPreambleSize + header_size && offset <= file_size_ &&
                    nbytes <= file_size_ - offset,
                ModelError, "weights file ", path, " is truncated: tensor ", name,
                " lies outside the file");
      RPT_CHECK(static_cast<std::uint64_t>(shape_numel(shape)) * dtype_size(dtype) == nbytes,
                ModelError, "weights file ", path, ": tensor ", name, " has ", nbytes,
                " bytes, shape ", shape_string(shape), " needs another size");
      if (options.verify_checksums) {
        const PhaseTimer checksum(checksum_seconds_);
        RPT_CHECK(crc32_of(base + offset, nbytes) == crc, ModelError, "weights file ", path,
                  " is corrupt: checksum mismatch in tensor ", name);
        release_pages(base + offset, nbytes);  // else the whole file stays resident while loading
      }
      RPT_CHECK(tensors_.count(name) == 0, ModelError, "weights file ", path, ": duplicate tensor ",
                name);
      tensors_.emplace(name, Stored{.tensor = Tensor::borrow(base + offset, shape, dtype, mapping_),
                                    .offset = offset});
    }
  } catch (const nlohmann::json::exception& error) {
    RPT_THROW(ModelError, "weights file ", path, " has a malformed header: ", error.what());
  } catch (const InvalidArgument& error) {
    RPT_THROW(ModelError, "weights file ", path, ": ", error.message());
  }
  map_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() -
                 checksum_seconds_;
}

Tensor WeightsFile::get(const std::string& name) const {
  auto found = tensors_.find(name);
  RPT_CHECK(found != tensors_.end(), ModelError, "weights file ", path_, " has no tensor '", name,
            "'");
  return found->second.tensor;
}

void WeightsFile::release(const std::string& name) const {
  auto found = tensors_.find(name);
  RPT_CHECK(found != tensors_.end(), ModelError, "weights file ", path_, " has no tensor '", name,
            "'");
  release_pages(static_cast<const unsigned char*>(mapping_.get()) + found->second.offset,
                found->second.tensor.nbytes());
}

std::vector<std::string> WeightsFile::names() const {
  std::vector<std::string> out;
  out.reserve(tensors_.size());
  for (const auto& [name, stored] : tensors_) out.push_back(name);
  return out;
}

}  // namespace rpt
