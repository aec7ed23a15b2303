#include "engine/cpu/position_tree.h"

#include "kernels/errors.h"

namespace rpt {

PositionTree::PositionTree(int node_floats, kernels::MemoryBudget* budget)
    : node_floats_(node_floats), charge_(budget) {}

void PositionTree::reserve(int count) {
  const auto needed = static_cast<std::size_t>(live()) + static_cast<std::size_t>(count);
  while (chunks_.size() * kNodesPerChunk < needed) {
    const std::size_t floats = static_cast<std::size_t>(kNodesPerChunk) * node_floats_;
    charge_.grow_to(charge_.bytes() + floats * sizeof(float));  // throws before allocating
    chunks_.push_back(std::make_unique_for_overwrite<float[]>(floats));
  }
  nodes_.reserve(chunks_.size() * kNodesPerChunk);
  free_.reserve(nodes_.capacity());
}

int PositionTree::add(int parent) {
  reserve(1);
  int node = 0;
  if (free_.empty()) {
    node = static_cast<int>(nodes_.size());
    nodes_.emplace_back();
  } else {
    node = free_.back();
    free_.pop_back();
  }
  nodes_[static_cast<std::size_t>(node)] = {
      .parent = parent, .holds = 1, .depth = depth(parent) + 1};
  if (parent >= 0) hold(parent);
  return node;
}

void PositionTree::hold(int node) {
  RPT_CHECK(node >= 0 && node < static_cast<int>(nodes_.size()) &&
                nodes_[static_cast<std::size_t>(node)].holds > 0,
            InvalidArgument, "hold of a free position node ", node);
  ++nodes_[static_cast<std::size_t>(node)].holds;
}

void PositionTree::release(int node) {
  while (node >= 0) {
    Node& n = nodes_[static_cast<std::size_t>(node)];
    RPT_CHECK(n.holds > 0, InvalidArgument, "release of a free position node ", node);
    if (--n.holds > 0) return;
    free_.push_back(node);
    node = n.parent;
  }
  if (free_.size() == nodes_.size()) {
    nodes_.clear();
    free_.clear();
    chunks_.clear();
    charge_.shrink_to(0);
  }
}

int PositionTree::depth(int node) const {
  return node < 0 ? 0 : nodes_[static_cast<std::size_t>(node)].depth;
}

float* PositionTree::values(int node) {
  const auto index = static_cast<std::size_t>(node);
  return chunks_[index / kNodesPerChunk].get() +
         (index % kNodesPerChunk) * static_cast<std::size_t>(node_floats_);
}

}  // namespace rpt
