#include "analysis/nsys_stats/sqlite_rtree.h"

#include <algorithm>
#include <cstring>

#include "analysis/checked_math.h"

namespace tracedoc::nsys_stats {

// Measured against nsys's libsqlite3: (float)(1.0 + (double)(x - min) / (double)(max - min)), and
// 1.0 when the span is empty.
float nsys_rtree_scale(int64_t x, int64_t min, int64_t max) {
  if (max == min) return 1.0f;
  // sql_sub_real: SQLite's subtraction, which goes on in floating point where int64 overflows
  // (damaged times; a plain int64 subtraction would be undefined behaviour).
  return static_cast<float>(1.0 + sql_sub_real(x, min) / sql_sub_real(max, min));
}

namespace {

// rtree.c's geometry helpers for one REAL32 dimension. Areas subtract in float and accumulate in
// double; margins and overlaps subtract in double, exactly as the C code does.
double cell_area(float lo, float hi) { return static_cast<double>(hi - lo); }

// SortByDimension: merge sort by low coordinate, then high; on full equality the right half's
// element goes first (so the sort is not stable), which decides how identical ranges are split.
template <typename Cell>
void sort_by_dimension(int* idx, int n, const Cell* cells, int* spare) {
  if (n <= 1) return;
  const int n_left = n / 2, n_right = n - n_left;
  int* right = idx + n_left;
  sort_by_dimension(idx, n_left, cells, spare);
  sort_by_dimension(right, n_right, cells, spare);
  std::memcpy(spare, idx, sizeof(int) * n_left);
  const int* left = spare;
  int il = 0, ir = 0;
  while (il < n_left || ir < n_right) {
    bool take_left = il != n_left;
    if (take_left && ir != n_right) {
      const Cell& a = cells[left[il]];
      const Cell& b = cells[right[ir]];
      take_left = a.lo < b.lo || (a.lo == b.lo && a.hi < b.hi);
    }
    if (take_left) {
      idx[il + ir] = left[il];
      ++il;
    } else {
      idx[il + ir] = right[ir];
      ++ir;
    }
  }
}

// SortByDistance: merge sort by distance; on equal distances the right half's element goes first.
void sort_by_distance(int* idx, int n, const double* distance, int* spare) {
  if (n <= 1) return;
  const int n_left = n / 2, n_right = n - n_left;
  int* right = idx + n_left;
  sort_by_distance(idx, n_left, distance, spare);
  sort_by_distance(right, n_right, distance, spare);
  std::memcpy(spare, idx, sizeof(int) * n_left);
  const int* left = spare;
  int il = 0, ir = 0;
  while (il < n_left || ir < n_right) {
    bool take_left;
    if (il == n_left) {
      take_left = false;
    } else if (ir == n_right) {
      take_left = true;
    } else {
      take_left = distance[left[il]] < distance[right[ir]];
    }
    if (take_left) {
      idx[il + ir] = left[il];
      ++il;
    } else {
      idx[il + ir] = right[ir];
      ++ir;
    }
  }
}

}  // namespace

SqliteRtree1D::SqliteRtree1D() { nodes_.emplace_back(); }

int SqliteRtree1D::new_node(int parent) {
  nodes_.emplace_back();
  nodes_.back().parent = parent;
  return static_cast<int>(nodes_.size() - 1);
}

void SqliteRtree1D::insert(int64_t rowid, float lo, float hi) {
  const Cell cell{rowid, lo, hi};
  const int leaf = choose_leaf(cell, 0);
  reinsert_height_ = -1;
  insert_cell(leaf, cell, 0);
}

// ChooseLeaf: descend to the child that grows least, ties to the smaller one (first wins).
int SqliteRtree1D::choose_leaf(const Cell& cell, int height) const {
  int node = 0;
  for (int level = 0; level < depth_ - height; ++level) {
    const Node& n = nodes_[node];
    int64_t best = 0;
    double min_growth = 0, min_area = 0;
    for (int i = 0; i < n.count; ++i) {
      const Cell& c = n.cells[i];
      const double area = cell_area(c.lo, c.hi);
      const double growth = cell_area(std::min(c.lo, cell.lo), std::max(c.hi, cell.hi)) - area;
      if (i == 0 || growth < min_growth || (growth == min_growth && area < min_area)) {
        min_growth = growth;
        min_area = area;
        best = c.id;
      }
    }
    node = static_cast<int>(best);
  }
  return node;
}

int SqliteRtree1D::index_in_parent(int node) const {
  const Node& parent = nodes_[nodes_[node].parent];
  for (int i = 0; i < parent.count; ++i) {
    if (parent.cells[i].id == node) return i;
  }
  return 0;  // unreachable: every child has a cell in its parent
}

void SqliteRtree1D::set_parent_if_inner(const Cell& cell, int node, int height) {
  if (height > 0) nodes_[cell.id].parent = node;
}

// rtreeInsertCell: append, or on overflow reinsert (first time at this height during this INSERT,
// never at the root) or split.
void SqliteRtree1D::insert_cell(int node, const Cell& cell, int height) {
  set_parent_if_inner(cell, node, height);
  Node& n = nodes_[node];
  if (n.count < kMaxCells) {
    n.cells[n.count++] = cell;
    adjust_tree(node, cell);
    return;
  }
  if (height <= reinsert_height_ || node == 0) {
    split_node(node, cell, height);
  } else {
    reinsert_height_ = height;
    reinsert(node, cell, height);
  }
}

// AdjustTree: grow the ancestors' boxes to contain the new cell.
void SqliteRtree1D::adjust_tree(int node, const Cell& cell) {
  for (int p = node; nodes_[p].parent >= 0; p = nodes_[p].parent) {
    Cell& box = nodes_[nodes_[p].parent].cells[index_in_parent(p)];
    if (cell.lo < box.lo || cell.hi > box.hi) {
      box.lo = std::min(box.lo, cell.lo);
      box.hi = std::max(box.hi, cell.hi);
    }
  }
}

// SplitNode with splitNodeStartree (R*-tree split) for one dimension.
void SqliteRtree1D::split_node(int node, const Cell& cell, int height) {
  constexpr int n = kMaxCells + 1;
  Cell cells[n];
  std::copy(nodes_[node].cells.begin(), nodes_[node].cells.begin() + nodes_[node].count, cells);
  cells[n - 1] = cell;
  nodes_[node].count = 0;

  int left, right;
  if (node == 0) {
    right = new_node(0);
    left = new_node(0);
    ++depth_;
  } else {
    left = node;
    right = new_node(nodes_[node].parent);
  }

  int sorted[n], spare[n];
  for (int i = 0; i < n; ++i) sorted[i] = i;
  sort_by_dimension(sorted, n, cells, spare);
  int best_split = 0;
  double best_overlap = 0, best_area = 0;
  for (int n_left = kMinCells; n_left <= n - kMinCells; ++n_left) {
    Cell l = cells[sorted[0]], r = cells[sorted[n - 1]];
    for (int k = 1; k < n - 1; ++k) {
      Cell& into = k < n_left ? l : r;
      into.lo = std::min(into.lo, cells[sorted[k]].lo);
      into.hi = std::max(into.hi, cells[sorted[k]].hi);
    }
    const double x1 = std::max(static_cast<double>(l.lo), static_cast<double>(r.lo));
    const double x2 = std::min(static_cast<double>(l.hi), static_cast<double>(r.hi));
    const double overlap = x2 < x1 ? 0.0 : 1.0 * (x2 - x1);
    const double area = cell_area(l.lo, l.hi) + cell_area(r.lo, r.hi);
    if (n_left == kMinCells || overlap < best_overlap || (overlap == best_overlap && area < best_area)) {
      best_split = n_left;
      best_overlap = overlap;
      best_area = area;
    }
  }
  Cell left_box = cells[sorted[0]], right_box = cells[sorted[best_split]];
  for (int i = 0; i < n; ++i) {
    const Cell& c = cells[sorted[i]];
    Node& target = nodes_[i < best_split ? left : right];
    Cell& box = i < best_split ? left_box : right_box;
    target.cells[target.count++] = c;
    box.lo = std::min(box.lo, c.lo);
    box.hi = std::max(box.hi, c.hi);
  }
  left_box.id = left;
  right_box.id = right;

  if (node == 0) {
    insert_cell(0, left_box, height + 1);
  } else {
    const int parent = nodes_[left].parent;
    nodes_[parent].cells[index_in_parent(left)] = left_box;
    adjust_tree(parent, left_box);
  }
  insert_cell(nodes_[right].parent, right_box, height + 1);
  for (int i = 0; i < nodes_[right].count; ++i) set_parent_if_inner(nodes_[right].cells[i], right, height);
  if (node == 0) {
    for (int i = 0; i < nodes_[left].count; ++i) set_parent_if_inner(nodes_[left].cells[i], left, height);
  }
}

// Reinsert (R*-tree forced reinsertion): keep the cells whose size is closest to the node's mean
// center coordinate (rtree.c's distance mixes the two), reinsert the others from the root.
void SqliteRtree1D::reinsert(int node, const Cell& cell, int height) {
  constexpr int n = kMaxCells + 1;
  Cell cells[n];
  int order[n], spare[n];
  double distance[n];
  double center = 0;
  for (int i = 0; i < n; ++i) {
    cells[i] = i == n - 1 ? cell : nodes_[node].cells[i];
    order[i] = i;
    center += static_cast<double>(cells[i].lo);
    center += static_cast<double>(cells[i].hi);
  }
  center = center / (n * 2.0);
  for (int i = 0; i < n; ++i) {
    const double coord = static_cast<double>(cells[i].hi) - static_cast<double>(cells[i].lo);
    distance[i] = 0.0 + (coord - center) * (coord - center);
  }
  sort_by_distance(order, n, distance, spare);
  Node& nd = nodes_[node];
  nd.count = 0;
  int i = 0;
  for (; i < n - (kMinCells + 1); ++i) nd.cells[nd.count++] = cells[order[i]];
  fix_bounding_box(node);
  for (; i < n; ++i) {
    const Cell& c = cells[order[i]];
    insert_cell(choose_leaf(c, height), c, height);
  }
}

// fixBoundingBox: recompute the node's box from its cells, store it in the parent, and so on upwards.
void SqliteRtree1D::fix_bounding_box(int node) {
  while (nodes_[node].parent >= 0) {
    const Node& n = nodes_[node];
    Cell box = n.cells[0];
    for (int i = 1; i < n.count; ++i) {
      box.lo = std::min(box.lo, n.cells[i].lo);
      box.hi = std::max(box.hi, n.cells[i].hi);
    }
    box.id = node;
    nodes_[n.parent].cells[index_in_parent(node)] = box;
    node = n.parent;
  }
}

void SqliteRtree1D::scan(int node, int level, std::vector<int64_t>& out) const {
  const Node& n = nodes_[node];
  for (int i = 0; i < n.count; ++i) {
    if (level == 0) {
      out.push_back(n.cells[i].id);
    } else {
      scan(static_cast<int>(n.cells[i].id), level - 1, out);
    }
  }
}

std::vector<int64_t> SqliteRtree1D::scan_order() const {
  std::vector<int64_t> out;
  scan(0, depth_, out);
  return out;
}

}  // namespace tracedoc::nsys_stats
