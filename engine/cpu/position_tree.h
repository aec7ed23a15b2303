// The decoder's self-attention keys and values as a tree of positions: each cached position of a
// decoder row is one node (its keys and values for every layer) under the node of the position
// before it; beams share their common prefix, so beam reordering copies nothing. A node lives
// while it is some row's last position or some node's parent. Storage comes in chunks that never
// move, reused through a free list, charged to the budget, and all given back once no node is
// live. Not thread-safe. Why: docs/ARCHITECTURE.md "Design notes".
#pragma once

#include <memory>
#include <vector>

#include "kernels/memory_budget.h"

namespace rpt {

class PositionTree {
 public:
  static constexpr int kNodesPerChunk = 64;

  // node_floats: one position's keys and values in all layers ([layers][keys | values][A], A:
  // attention_dim).
  PositionTree(int node_floats, kernels::MemoryBudget* budget);

  // Makes room for `count` more nodes than are live: add() then allocates nothing, so a step
  // can fail (ResourceExhausted, std::bad_alloc) before it changes the tree.
  void reserve(int count);
  // A new node after `parent` (-1: a first position), held once by its caller; the parent gains
  // a hold (its child).
  int add(int parent);
  void hold(int node);
  // One hold less: a node no one holds is freed, and so, in turn, is its parent. The last live
  // node's release frees all storage.
  void release(int node);

  int parent(int node) const { return nodes_[static_cast<std::size_t>(node)].parent; }
  // Positions from the root to `node`, both included; 0 for -1 (no position yet).
  int depth(int node) const;
  float* values(int node);
  int live() const { return static_cast<int>(nodes_.size() - free_.size()); }

 private:
  struct Node {
    int parent = -1;
    int holds = 0;  // children plus rows whose last position this is
    int depth = 0;
  };

  int node_floats_;
  std::vector<Node> nodes_;
  std::vector<int> free_;
  std::vector<std::unique_ptr<float[]>> chunks_;
  kernels::MemoryCharge charge_;
};

}  // namespace rpt
