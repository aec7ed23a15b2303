// The decoder's self-attention keys and values as a tree of positions: each cached position of
// a decoder row is one node holding its keys and values for every layer, under the node of the
// position before it. The beams of a sentence share their common prefix: a beam that forks holds
// the parent's last node, so beam reordering copies nothing (why: docs/PERFORMANCE.md "rpt vs
// CTranslate2 after the position tree, balanced attention and grouped encoding").
//
// A node lives while it is some row's last position or some node's parent; releasing the last
// hold frees it and, up the tree, every ancestor no one else holds. Storage comes in chunks of
// kNodesPerChunk nodes that never move (pointers into them stay valid), reused through a free
// list and charged to the budget as they are allocated; once no node is live every chunk is
// given back (a long-lived server keeps no peak between its busy spells). Not thread-safe.
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
