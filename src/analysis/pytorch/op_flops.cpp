#include "analysis/pytorch/op_flops.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <optional>
#include <string>

#include "analysis/checked_math.h"

namespace tracedoc::pytorch {

namespace {

// ---- the recorded args ------------------------------------------------------------------------

// One argument: its dims when it is an array of integers ("Input Dims" entry), else not a tensor.
struct Arg {
  std::vector<int64_t> dims;
  bool has_dims = false;  // an array of integers (possibly empty: a scalar or a 0-d tensor)
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : dims) n = sat_mul(n, std::max<int64_t>(d, 0));
    return n;
  }
};

// A minimal reader of the compact JSON Kineto writes for these args.
class JsonText {
 public:
  explicit JsonText(std::string_view s) : s_(s) {}
  bool eat(char c) {
    skip_space();
    if (at_ < s_.size() && s_[at_] == c) return ++at_, true;
    return false;
  }
  char peek() {
    skip_space();
    return at_ < s_.size() ? s_[at_] : '\0';
  }
  std::optional<int64_t> integer() {
    skip_space();
    const size_t begin = at_;
    if (at_ < s_.size() && s_[at_] == '-') ++at_;
    int64_t v = 0;
    while (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_])))
      v = sat_add(sat_mul(v, 10), s_[at_++] - '0');
    if (at_ == begin) return std::nullopt;
    return s_[begin] == '-' ? -v : v;
  }
  std::string string() {
    std::string out;
    if (!eat('"')) return out;
    while (at_ < s_.size() && s_[at_] != '"') {
      if (s_[at_] == '\\' && at_ + 1 < s_.size()) ++at_;
      out += s_[at_++];
    }
    ++at_;
    return out;
  }
  // Skips one value of any shape.
  void skip() {
    skip_space();
    if (at_ >= s_.size()) return;
    if (s_[at_] == '"') {
      string();
      return;
    }
    int depth = 0;
    for (; at_ < s_.size(); ++at_) {
      const char c = s_[at_];
      if (c == '[' || c == '{') ++depth;
      if (c == ']' || c == '}') {
        if (depth == 0) return;
        if (--depth == 0) {
          ++at_;
          return;
        }
      }
      if (depth == 0 && c == ',') return;
    }
  }
  bool done() { return peek() == '\0'; }

 private:
  void skip_space() {
    while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
  }
  std::string_view s_;
  size_t at_ = 0;
};

std::vector<Arg> parse_dims(std::string_view text) {
  std::vector<Arg> args;
  JsonText j(text);
  if (!j.eat('[')) return args;
  while (!j.eat(']') && !j.done()) {
    Arg a;
    if (j.peek() == '[') {
      j.eat('[');
      a.has_dims = true;
      while (!j.eat(']') && !j.done()) {
        if (auto v = j.integer()) {
          a.dims.push_back(*v);
        } else {
          a.has_dims = false;  // a list of lists (TensorList) or of something else
          a.dims.clear();
          j.skip();
        }
        j.eat(',');
      }
    } else {
      j.skip();
    }
    args.push_back(std::move(a));
    j.eat(',');
  }
  return args;
}

std::vector<std::string> parse_strings(std::string_view text) {
  std::vector<std::string> out;
  JsonText j(text);
  if (!j.eat('[')) return out;
  while (!j.eat(']') && !j.done()) {
    if (j.peek() == '"')
      out.push_back(j.string());
    else
      j.skip(), out.emplace_back();
    j.eat(',');
  }
  return out;
}

// "[2, 2]" or "2" from Concrete Inputs.
std::vector<int64_t> int_list(std::string_view text) {
  std::vector<int64_t> out;
  JsonText j(text);
  if (j.eat('[')) {
    while (!j.eat(']') && !j.done()) {
      if (auto v = j.integer())
        out.push_back(*v);
      else
        j.skip();
      j.eat(',');
    }
  } else if (auto v = j.integer()) {
    out.push_back(*v);
  }
  return out;
}

struct Call {
  std::vector<Arg> args;
  std::vector<std::string> types, concrete;
  const Arg& arg(size_t i) const {
    static const Arg none;
    return i < args.size() ? args[i] : none;
  }
  std::string_view type(size_t i) const { return i < types.size() ? std::string_view(types[i]) : std::string_view(); }
  std::string_view concrete_at(size_t i) const {
    return i < concrete.size() ? std::string_view(concrete[i]) : std::string_view();
  }
  // A tensor argument: dims recorded and, where types are recorded, a tensor element type. Without
  // types (emit_nvtx's sizes), `[]` is a scalar or another non-tensor argument, as it is nearly always.
  bool tensor(size_t i) const {
    if (!arg(i).has_dims) return false;
    return types.empty() ? !arg(i).dims.empty() : element_bytes(type(i)) > 0;
  }
  // Bytes of tensor argument i; float when the trace recorded no types.
  int64_t bytes(size_t i) const {
    if (!tensor(i)) return 0;
    const int64_t e = types.empty() ? 4 : element_bytes(type(i));
    return sat_mul(arg(i).numel(), e);
  }
  int64_t element(size_t i) const { return types.empty() ? 4 : std::max<int64_t>(element_bytes(type(i)), 1); }
  int64_t all_tensor_bytes() const {
    int64_t b = 0;
    for (size_t i = 0; i < args.size(); ++i) b = sat_add(b, bytes(i));
    return b;
  }
  Dtype dtype() const {
    for (size_t i = 0; i < args.size(); ++i) {
      if (tensor(i)) return types.empty() ? Dtype::kFp32 : dtype_of(type(i));
    }
    return Dtype::kUnknown;
  }
};

int64_t product(std::initializer_list<int64_t> v) {
  int64_t p = 1;
  for (int64_t x : v) p = sat_mul(p, std::max<int64_t>(x, 0));
  return p;
}

// ---- formulas -------------------------------------------------------------------------------

OpCost matmul_cost(std::string_view op, const Call& c) {
  OpCost r{FlopKind::kMatmul};
  // The two matrices: mm(a, b), bmm(a, b), matmul(a, b), _scaled_mm(a, b, ...); addmm(bias, a, b),
  // baddbmm(c, a, b); linear(x, w[, bias]) with w [n, k].
  size_t a = 0, b = 1;
  if (op == "addmm" || op == "baddbmm" || op == "addbmm") a = 1, b = 2;
  const std::vector<int64_t>& x = c.arg(a).dims;
  const std::vector<int64_t>& y = c.arg(b).dims;
  if (!c.arg(a).has_dims || !c.arg(b).has_dims || x.empty() || y.empty()) return r;
  int64_t batch = 1, m = 1, k = 0, n = 1;
  if (op == "linear") {
    if (y.size() != 2) return r;
    k = x.back(), n = y[0];
    for (size_t i = 0; i + 1 < x.size(); ++i) batch = sat_mul(batch, x[i]);
    if (y[1] != k) return r;
  } else {
    // matmul's broadcasting: a 1-D operand is a row (left) or a column (right).
    k = x.back();
    m = x.size() >= 2 ? x[x.size() - 2] : 1;
    n = y.size() >= 2 ? y.back() : 1;
    const int64_t ky = y.size() >= 2 ? y[y.size() - 2] : y[0];
    if (ky != k) return r;
    const size_t bx = x.size() > 2 ? x.size() - 2 : 0, by = y.size() > 2 ? y.size() - 2 : 0;
    for (size_t i = 0; i < std::max(bx, by); ++i) {
      const int64_t dx = i + bx >= std::max(bx, by) ? x[i + bx - std::max(bx, by)] : 1;
      const int64_t dy = i + by >= std::max(bx, by) ? y[i + by - std::max(bx, by)] : 1;
      batch = sat_mul(batch, std::max(dx, dy));
    }
  }
  r.known = true;
  r.flops = sat_mul(2, product({batch, m, k, n}));
  r.dtype = c.dtype();
  if (op == "linear")
    r.batch = 1, r.m = batch, r.n = n, r.k = k;
  else
    r.batch = batch, r.m = m, r.n = n, r.k = k;
  // Minimal traffic: both operands, the result, and an added bias or matrix.
  const int64_t out = sat_mul(product({batch, m, n}), c.element(a));
  r.bytes = sat_add(sat_add(c.bytes(a), c.bytes(b)), out);
  if (op == "addmm" || op == "baddbmm" || op == "addbmm") r.bytes = sat_add(r.bytes, c.bytes(0));
  if (op == "linear") r.bytes = sat_add(r.bytes, c.bytes(2));
  return r;
}

// Where stride, padding, dilation, transposed and groups sit in each convolution's arguments.
struct ConvArgs {
  int stride, padding, dilation, transposed, groups;  // -1: not an argument of this op
};
std::optional<ConvArgs> conv_layout(std::string_view op) {
  if (op == "conv1d" || op == "conv2d" || op == "conv3d") return ConvArgs{3, 4, 5, -1, 6};
  if (op == "convolution" || op == "_convolution") return ConvArgs{3, 4, 5, 6, 8};
  if (op == "cudnn_convolution") return ConvArgs{3, 2, 4, -1, 5};  // (self, weight, padding, stride, ...)
  if (op == "miopen_convolution" || op == "mkldnn_convolution") return ConvArgs{4, 3, 5, -1, 6};
  return std::nullopt;
}

// 2 · N · K · (C/g) · prod(kernel) · prod(output spatial), flop_counter's conv_flop_count.
int64_t conv_flops(const std::vector<int64_t>& x, const std::vector<int64_t>& w, const std::vector<int64_t>& spatial) {
  int64_t f = sat_mul(2, product({x[0], w[0], w[1]}));
  for (size_t i = 2; i < w.size(); ++i) f = sat_mul(f, w[i]);
  for (int64_t s : spatial) f = sat_mul(f, s);
  return f;
}

OpCost conv_cost(std::string_view op, const Call& c) {
  OpCost r{FlopKind::kConvolution};
  const auto layout = conv_layout(op);
  const std::vector<int64_t>& x = c.arg(0).dims;
  const std::vector<int64_t>& w = c.arg(1).dims;
  if (!layout || x.size() < 3 || w.size() != x.size()) return r;
  const size_t dims = x.size() - 2;
  const auto list = [&](int at, int64_t fallback) {
    std::vector<int64_t> v = at < 0 ? std::vector<int64_t>{} : int_list(c.concrete_at(static_cast<size_t>(at)));
    if (v.size() == 1) v.assign(dims, v[0]);
    if (v.empty() && at < 0) v.assign(dims, fallback);
    return v;
  };
  const std::vector<int64_t> stride = list(layout->stride, 1), padding = list(layout->padding, 0),
                             dilation = list(layout->dilation, 1);
  if (stride.size() != dims || padding.size() != dims || dilation.size() != dims) return r;  // not recorded
  const bool transposed = layout->transposed >= 0 && c.concrete_at(static_cast<size_t>(layout->transposed)) == "True";
  std::vector<int64_t> spatial;
  for (size_t i = 0; i < dims; ++i) {
    if (transposed) {
      spatial.push_back(x[2 + i]);  // flop_counter: a transposed convolution is counted on its input size
      continue;
    }
    const int64_t span =
        sat_sub(sat_add(x[2 + i], sat_mul(2, padding[i])), sat_add(sat_mul(dilation[i], w[2 + i] - 1), 1));
    if (stride[i] <= 0 || span < 0) return r;
    spatial.push_back(span / stride[i] + 1);
  }
  r.known = true;
  r.flops = conv_flops(x, w, spatial);
  r.dtype = c.dtype();
  int64_t out = sat_mul(x[0], transposed ? w[1] : w[0]);
  for (int64_t s : spatial) out = sat_mul(out, s);
  r.bytes = sat_add(sat_add(c.bytes(0), c.bytes(1)), sat_add(sat_mul(out, c.element(0)), c.bytes(2)));
  return r;
}

// convolution_backward(grad_output, input, weight, ..., output_mask) and the older
// cudnn_convolution_backward(input, grad_output, weight, ..., output_mask): grad_input and
// grad_weight each cost the forward's FLOPs (flop_counter's conv_backward_flop); the mask says which
// were computed (both when not recorded). The backward of one input or one weight alone:
// cudnn_convolution_backward_input(input_size, grad_output, weight, ...).
OpCost conv_backward_cost(std::string_view op, const Call& c) {
  OpCost r{FlopKind::kConvolution};
  size_t grad = 0, input = 1, weight = 2;
  int passes = 2;
  if (op == "cudnn_convolution_backward" || op == "miopen_convolution_backward") grad = 1, input = 0;
  if (op == "cudnn_convolution_backward_input") grad = 1, input = 99, passes = 1;
  const std::vector<int64_t>& g = c.arg(grad).dims;
  const std::vector<int64_t>& w = c.arg(weight).dims;
  if (g.size() < 3 || w.size() != g.size()) return r;
  if (op == "convolution_backward" || op == "cudnn_convolution_backward" || op == "miopen_convolution_backward") {
    const std::string_view mask = c.concrete.empty() ? std::string_view() : c.concrete_at(c.concrete.size() - 1);
    if (!mask.empty() && mask.front() == '[') {
      passes = 0;
      for (size_t at = mask.find("True"); at != std::string_view::npos; at = mask.find("True", at + 1)) ++passes;
      // The third flag is the bias gradient: a reduction, not counted.
      const size_t third = mask.rfind(',');
      if (third != std::string_view::npos && mask.find("True", third) != std::string_view::npos) --passes;
    }
  }
  // The forward's FLOPs from the gradient's spatial size, which is the forward output's.
  const std::vector<int64_t> spatial(g.begin() + 2, g.end());
  const std::vector<int64_t> x = {g[0], 0};
  r.known = true;
  r.flops = sat_mul(passes, conv_flops(x, w, spatial));
  r.dtype = c.dtype();
  r.bytes = sat_add(sat_add(c.bytes(grad), c.bytes(weight)), input < c.args.size() ? c.bytes(input) : 0);
  // Written: the gradients computed, as large as the input and the weight.
  r.bytes = sat_add(r.bytes, sat_add(input < c.args.size() ? c.bytes(input) : 0, c.bytes(weight)));
  return r;
}

// q, k, v as [batch, heads, seq, dim] (scaled_dot_product_* ops) or [batch, seq, heads, dim]
// (_flash_attention_* and _efficient_attention_*, flop_counter transposes them the same way).
OpCost attention_cost(std::string_view op, const Call& c, bool backward) {
  OpCost r{FlopKind::kAttention};
  const bool seq_second = op.starts_with("_flash_attention") || op.starts_with("_efficient_attention");
  const size_t first = backward ? 1 : 0;  // backward ops take grad_out first
  const std::vector<int64_t>& q = c.arg(first).dims;
  const std::vector<int64_t>& k = c.arg(first + 1).dims;
  const std::vector<int64_t>& v = c.arg(first + 2).dims;
  if (q.size() != 4 || k.size() != 4 || v.size() != 4) return r;
  const int64_t b = q[0], h = seq_second ? q[2] : q[1], s_q = seq_second ? q[1] : q[2], d_q = q[3];
  const int64_t s_k = seq_second ? k[1] : k[2], d_v = v[3];
  const int64_t base = sat_mul(2, product({b, h, s_q, s_k}));
  r.known = true;
  r.flops = sat_mul(base, backward ? sat_add(sat_mul(3, d_q), sat_mul(2, d_v)) : sat_add(d_q, d_v));
  r.dtype = c.dtype();
  const int64_t qkv = sat_add(sat_add(c.bytes(first), c.bytes(first + 1)), c.bytes(first + 2));
  const int64_t out = sat_mul(product({b, h, s_q, d_v}), c.element(first));
  // Forward reads q, k, v and writes the output; backward also reads grad_out and the output and
  // writes the three gradients.
  r.bytes = backward ? sat_add(sat_mul(2, qkv), sat_mul(2, out)) : sat_add(qkv, out);
  return r;
}

// Memory-bound operators: FLOPs per element of the first tensor input, and every tensor argument
// read plus an output as large as the first input written.
// Bytes per element of argument i: its recorded type's, else `fallback` (indices are int64).
int64_t types_or(const Call& c, size_t i, int64_t fallback) {
  return c.types.empty() ? fallback : std::max<int64_t>(element_bytes(c.type(i)), 1);
}

OpCost per_element_cost(FlopKind kind, int64_t flops_per_element, const Call& c) {
  OpCost r{kind};
  size_t first = 0;
  while (first < c.args.size() && !c.tensor(first)) ++first;
  if (first == c.args.size()) return r;
  if (kind == FlopKind::kEmbedding) {
    // embedding(weight[V, d], indices): only the looked-up rows are read, and written as the result.
    const std::vector<int64_t>& w = c.arg(0).dims;
    if (w.size() != 2 || !c.arg(1).has_dims) return r;
    r.known = true;
    r.dtype = c.dtype();
    const int64_t rows_bytes = sat_mul(sat_mul(c.arg(1).numel(), w[1]), c.element(0));
    r.bytes = sat_add(sat_mul(2, rows_bytes), sat_mul(c.arg(1).numel(), types_or(c, 1, 8)));
    return r;
  }
  int64_t out = c.arg(first).numel();
  if (kind == FlopKind::kElementwise) {
    // The result has the tensor inputs' broadcast shape: dims aligned on the right, each the largest.
    std::vector<int64_t> shape;
    for (size_t i = first; i < c.args.size(); ++i) {
      if (!c.tensor(i)) continue;
      const std::vector<int64_t>& d = c.arg(i).dims;
      if (d.size() > shape.size()) shape.insert(shape.begin(), d.size() - shape.size(), 1);
      for (size_t k = 0; k < d.size(); ++k) {
        int64_t& s = shape[shape.size() - d.size() + k];
        s = std::max(s, d[k]);
      }
    }
    out = 1;
    for (int64_t d : shape) out = sat_mul(out, std::max<int64_t>(d, 0));
  }
  r.known = true;
  r.flops = sat_mul(flops_per_element, out);
  r.dtype = c.dtype();
  r.bytes = sat_add(c.all_tensor_bytes(), kind == FlopKind::kReduction ? 0 : sat_mul(out, c.element(first)));
  return r;
}

// The FLOPs per element the memory-bound operators are counted with (docs/flops.md).
struct PerElement {
  std::string_view op;
  FlopKind kind;
  int64_t flops;
};
constexpr PerElement kPerElement[] = {
    {"layer_norm", FlopKind::kNorm, 5},
    {"native_layer_norm", FlopKind::kNorm, 5},
    {"native_layer_norm_backward", FlopKind::kNorm, 10},
    {"rms_norm", FlopKind::kNorm, 4},
    {"_fused_rms_norm", FlopKind::kNorm, 4},
    {"batch_norm", FlopKind::kNorm, 5},
    {"native_batch_norm", FlopKind::kNorm, 5},
    {"cudnn_batch_norm", FlopKind::kNorm, 5},
    {"cudnn_batch_norm_backward", FlopKind::kNorm, 10},
    {"native_batch_norm_backward", FlopKind::kNorm, 10},
    {"group_norm", FlopKind::kNorm, 5},
    {"native_group_norm", FlopKind::kNorm, 5},
    {"softmax", FlopKind::kSoftmax, 5},
    {"_softmax", FlopKind::kSoftmax, 5},
    {"log_softmax", FlopKind::kSoftmax, 5},
    {"_log_softmax", FlopKind::kSoftmax, 5},
    {"_softmax_backward_data", FlopKind::kSoftmax, 3},
    {"_log_softmax_backward_data", FlopKind::kSoftmax, 3},
    {"add", FlopKind::kElementwise, 1},
    {"add_", FlopKind::kElementwise, 1},
    {"sub", FlopKind::kElementwise, 1},
    {"sub_", FlopKind::kElementwise, 1},
    {"mul", FlopKind::kElementwise, 1},
    {"mul_", FlopKind::kElementwise, 1},
    {"div", FlopKind::kElementwise, 1},
    {"div_", FlopKind::kElementwise, 1},
    {"addcmul_", FlopKind::kElementwise, 2},
    {"addcdiv_", FlopKind::kElementwise, 2},
    {"relu", FlopKind::kElementwise, 1},
    {"relu_", FlopKind::kElementwise, 1},
    {"threshold_backward", FlopKind::kElementwise, 1},
    {"gelu", FlopKind::kElementwise, 1},
    {"gelu_backward", FlopKind::kElementwise, 1},
    {"silu", FlopKind::kElementwise, 1},
    {"silu_", FlopKind::kElementwise, 1},
    {"silu_backward", FlopKind::kElementwise, 1},
    {"sigmoid", FlopKind::kElementwise, 1},
    {"tanh", FlopKind::kElementwise, 1},
    {"exp", FlopKind::kElementwise, 1},
    {"sqrt", FlopKind::kElementwise, 1},
    {"rsqrt", FlopKind::kElementwise, 1},
    {"pow", FlopKind::kElementwise, 1},
    {"sum", FlopKind::kReduction, 1},
    {"mean", FlopKind::kReduction, 1},
    {"amax", FlopKind::kReduction, 1},
    {"max", FlopKind::kReduction, 1},
    {"norm", FlopKind::kReduction, 2},
    {"embedding", FlopKind::kEmbedding, 0},
};

}  // namespace

const char* flop_kind_name(FlopKind k) {
  switch (k) {
    case FlopKind::kNone: return "none";
    case FlopKind::kMatmul: return "matmul";
    case FlopKind::kConvolution: return "convolution";
    case FlopKind::kAttention: return "attention";
    case FlopKind::kNorm: return "normalization";
    case FlopKind::kSoftmax: return "softmax";
    case FlopKind::kElementwise: return "elementwise";
    case FlopKind::kReduction: return "reduction";
    case FlopKind::kEmbedding: return "embedding";
  }
  return "none";
}

const char* dtype_name(Dtype d) {
  constexpr const char* kNames[] = {"unknown", "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "fp4", "int8"};
  return kNames[static_cast<size_t>(d)];
}

Dtype dtype_of(std::string_view t) {
  if (t.starts_with("c10::")) t.remove_prefix(5);
  if (t == "double") return Dtype::kFp64;
  if (t == "float") return Dtype::kFp32;
  if (t == "Half") return Dtype::kFp16;
  if (t == "BFloat16") return Dtype::kBf16;
  if (t.starts_with("Float8")) return Dtype::kFp8;
  if (t.starts_with("Float4")) return Dtype::kFp4;
  if (t == "signed char" || t == "unsigned char") return Dtype::kInt8;
  return Dtype::kUnknown;
}

int64_t element_bytes(std::string_view t) {
  if (t.starts_with("c10::")) t.remove_prefix(5);
  if (t == "double" || t == "long int" || t == "long" || t == "complex<float>" || t == "unsigned long") return 8;
  if (t == "float" || t == "int" || t == "unsigned int") return 4;
  if (t == "Half" || t == "BFloat16" || t == "short int" || t == "short") return 2;
  if (t.starts_with("Float8") || t.starts_with("Float4") || t == "signed char" || t == "unsigned char" || t == "bool")
    return 1;
  if (t == "complex<double>") return 16;
  return 0;
}

namespace {

OpCost cost_of_call(std::string_view name, std::string_view input_dims, std::string_view input_types,
                    std::string_view concrete_inputs) {
  if (!name.starts_with("aten::")) return {};
  const std::string_view op = name.substr(6);
  const bool matmul = op == "mm" || op == "addmm" || op == "bmm" || op == "baddbmm" || op == "addbmm" ||
                      op == "matmul" || op == "linear" || op == "_scaled_mm";
  const bool conv = conv_layout(op).has_value();
  const bool conv_backward = op == "convolution_backward" || op == "cudnn_convolution_backward" ||
                             op == "miopen_convolution_backward" || op == "cudnn_convolution_backward_input";
  const bool attention = op == "scaled_dot_product_attention" || op.starts_with("_scaled_dot_product_") ||
                         op.starts_with("_flash_attention_") || op.starts_with("_efficient_attention_");
  const PerElement* per_element = nullptr;
  for (const PerElement& p : kPerElement) {
    if (p.op == op) per_element = &p;
  }
  if (!matmul && !conv && !conv_backward && !attention && per_element == nullptr) return {};
  Call c;
  c.args = parse_dims(input_dims);
  c.types = parse_strings(input_types);
  c.concrete = parse_strings(concrete_inputs);
  if (matmul) return matmul_cost(op == "_scaled_mm" ? "mm" : op, c);
  if (conv) return conv_cost(op, c);
  if (conv_backward) return conv_backward_cost(op, c);
  if (attention) return attention_cost(op, c, op.ends_with("_backward"));
  return per_element_cost(per_element->kind, per_element->flops, c);
}

}  // namespace

OpCost op_cost(std::string_view name, std::string_view input_dims, std::string_view input_types,
               std::string_view concrete_inputs) {
  OpCost c = cost_of_call(name, input_dims, input_types, concrete_inputs);
  // The formulas saturate at INT64_MAX: a count that reached it is not a count.
  constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();
  if (c.known && (c.flops == kSaturated || c.bytes == kSaturated)) {
    c.known = false, c.overflow = true;
    c.flops = c.bytes = 0;
  }
  return c;
}

OpCosts op_costs(const Trace& trace, const OpLinks& links) {
  const OpTable& ops = trace.pytorch.ops;
  OpCosts out;
  out.cost.resize(ops.size());
  out.counted_by.assign(ops.size(), kNoRow);
  std::vector<OpCost> own(ops.size());
  std::vector<uint8_t> descendant_counted(ops.size(), 0);
  for (size_t i = 0; i < ops.size(); ++i)
    own[i] = op_cost(trace.str(ops.name[i]), trace.str(ops.input_dims[i]), trace.str(ops.input_types[i]),
                     trace.str(ops.concrete_inputs[i]));
  // Parents before children: an operator is counted when its own cost is known and no ancestor is.
  for (uint32_t i : links.order) {
    const int32_t p = links.parent[i];
    const int32_t above = p == kNoRow ? kNoRow : out.counted_by[static_cast<size_t>(p)];
    if (above != kNoRow) {
      out.counted_by[i] = above;
    } else if (own[i].known) {
      out.counted_by[i] = static_cast<int32_t>(i);
      out.cost[i] = own[i];
    }
  }
  // Children before parents: which operators have a counted one inside them.
  for (auto it = links.order.rbegin(); it != links.order.rend(); ++it) {
    const uint32_t i = *it;
    const int32_t p = links.parent[i];
    if (p != kNoRow && (out.counted_by[i] == static_cast<int32_t>(i) || descendant_counted[i]))
      descendant_counted[static_cast<size_t>(p)] = 1;
  }
  // Parents before children: a chain whose formulas all lacked shapes (conv2d > convolution >
  // cudnn_convolution) and under which nothing counted is one unknown operator, its outermost.
  std::vector<uint8_t> unknown_above(ops.size(), 0);
  for (uint32_t i : links.order) {
    const int32_t p = links.parent[i];
    const bool above = p != kNoRow && unknown_above[static_cast<size_t>(p)];
    const bool unknown =
        own[i].kind != FlopKind::kNone && !own[i].known && out.counted_by[i] == kNoRow && !descendant_counted[i];
    if (unknown && !above) ++out.unknown, out.overflowing += own[i].overflow;
    unknown_above[i] = above || unknown;
  }
  return out;
}

}  // namespace tracedoc::pytorch
