// A replica of SQLite's rtree module (ext/rtree/rtree.c, SQLite 3.42 as bundled with nsys) for a
// one-dimensional REAL32 table filled by INSERTs, reduced to what decides the order in which a scan
// returns the entries.
//
// nsys's NVTX projection reports pick a range's parent with min() over an rtree scan, so when two
// candidates tie the first one the scan meets wins. A scan walks the tree depth-first in cell order
// (with or without constraints, which only prune), so the depth-first order of the final tree is the
// tie order. That tree depends on every detail of the insertion algorithm: forced reinsertion,
// the R*-tree split, float32 coordinates, SQLite's not-quite-stable merge sorts.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace tracedoc::nsys_stats {

// nsys's rtree_scale(x, min, max): maps a timestamp into float32 coordinates, 1.0 at `min`, 2.0 at `max`.
float nsys_rtree_scale(int64_t x, int64_t min, int64_t max);

class SqliteRtree1D {
 public:
  SqliteRtree1D();
  // INSERT of one row (coordinates already float32, lo <= hi).
  void insert(int64_t rowid, float lo, float hi);
  // Row ids in the order a full scan returns them.
  std::vector<int64_t> scan_order() const;

 private:
  // With SQLite's default 4096-byte pages a node would hold 251 cells, but rtree.c caps nodes at
  // RTREE_MAXCELLS = 51 cells; the minimum fill (and reinsertion count) is a third of that.
  static constexpr int kMaxCells = 51;
  static constexpr int kMinCells = kMaxCells / 3;

  struct Cell {
    int64_t id;  // row id in leaves, child node index in inner nodes
    float lo, hi;
  };
  struct Node {
    std::array<Cell, kMaxCells> cells;
    int count = 0;
    int parent = -1;
  };

  int new_node(int parent);
  int choose_leaf(const Cell& cell, int height) const;
  void insert_cell(int node, const Cell& cell, int height);
  void adjust_tree(int node, const Cell& cell);
  void split_node(int node, const Cell& cell, int height);
  void reinsert(int node, const Cell& cell, int height);
  void fix_bounding_box(int node);
  int index_in_parent(int node) const;
  void set_parent_if_inner(const Cell& cell, int node, int height);
  void scan(int node, int level, std::vector<int64_t>& out) const;

  std::vector<Node> nodes_;  // nodes_[0] is the root
  int depth_ = 0;            // height of the root; leaves are at height 0
  int reinsert_height_ = -1;
};

}  // namespace tracedoc::nsys_stats
