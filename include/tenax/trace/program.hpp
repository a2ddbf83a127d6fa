#pragma once
// Program: a graph prepared for repeated runs. compile() applies, in order:
//   - common-subexpression elimination (same op, same parameter bytes, same inputs),
//   - dead-code elimination (only what the outputs need survives),
//   - joined steps: a node whose op has a joint form (GraphNode::joins; ExpmFrechet, whose
//     algorithm computes exp(A) on the way to L(A, E)) and an earlier node of the op that form also
//     computes, on the same first inputs, become one node in the earlier one's place when the later
//     one's inputs are ready there: a JVP of matrix_exp computes the exponential once;
//   - a memory plan by liveness: each value is released right after its last reader, so its
//     buffer goes back to the size-class pool and the next allocation of that class reuses it; the
//     plan's peak live bytes are reported by str();
//   - in place where safe: an elementwise step (one map) whose input of the output's dtype and
//     shape dies at that step writes its output into that input's buffer, when at run time
//     nothing else holds the input or its storage (no view, not an input or constant of the
//     program); str() marks such steps "in place of %v". Off in anomaly mode, whose checks read
//     a step's inputs after it ran.
// Constant folding happens while tracing (input-independent ops are not recorded). LAPACK
// workspaces are queried once per shape by the provider layer and pooled.
//
// The first run prepares the program. It runs every step's forward (with in-place writes off and
// every value kept to the end, so its peak memory is the sum of all values) while capturing the
// kernel each step ran (kernels/capture.hpp),
// and then classifies each step:
//   - kernel: an op whose forward is one captured kernel (Op::elementwise, Op::one_kernel: maps,
//     copies and casts, reductions, matmul, tril/triu, embed, solve_triangular, and the CPU
//     linalg factorizations and solves: qr, eigh/eigvalsh, svd/svdvals, lu_factor, cholesky,
//     solve, slogdet, det, lu_solve) that ran on the CPU into fresh buffers, one per output, and
//     read only the node's inputs. Later runs call the captured kernel (functor + merged loop
//     nest, gemm parameters + batch offsets, or the factorization's loop with its scratch held by
//     the kernel) on the outputs' and operands' data pointers: no broadcasting, no stride merging,
//     no output shape logic. The scratch a factorization keeps (a copy of A, tau) lives as long
//     as the program and is not counted in slot_bytes();
//   - view: a step whose output shares its storage with one of its inputs (transpose, slices,
//     reshape of a contiguous value, expand, diagonal, real/imag, ...). Later runs make the same
//     view (dtype, shape, strides, offset relative to the base) without running the op;
//   - forward: everything else (concat of integer tensors, device copies, zero-size outputs, any
//     step on a GPU), which runs its op's forward as before.
// Consecutive kernel steps that each ran one CPU map into a fresh buffer of one shape are fused
// (operands not read in element order are gathered per block): one loop over blocks runs each step's element loop
// in turn, values only the chain reads kept in block registers (Program::Fusion),
// and builds a static memory plan: values are grouped by the storage they share (a buffer and the
// views of it); a group that no program input, output or constant belongs to and whose buffer a
// kernel step writes gets a slot (each output of a multi-output kernel is its own group), one buffer of the plan that
// groups with disjoint lifetimes share (best fit; an elementwise step may take the slot of an operand whose group ends
// at that step, which is in-place execution). Slot-backed values keep one body across runs, so their steps allocate
// nothing; other kernel outputs are allocated from the pool per run, or take the body of an elementwise operand that
// dies at the step when nothing else refers to it. The plan is valid for the input layouts of the first run (the
// kernels' strides follow from them; strides of size-1 dimensions do not matter); a run whose inputs have other
// strides, and any run in anomaly mode (whose checks read a step's inputs after it ran), executes every step's forward
// instead. The plan ties kernel operands and view bases to the node inputs they were in the first run, so a run in
// which two inputs, or an input and a constant, are the same tensor does not prepare the program (it runs the forwards;
// the next run with distinct inputs prepares). str() shows each step's kind and slot. After the first run a prepared
// run makes no system allocation and no pool miss (tests/trace checks it). run() checks dtypes, shapes and devices
// against the compiled signature (in anomaly mode each step's outputs are checked for NaN/Inf, ad/anomaly.hpp). A
// Program is not reentrant: use one per thread (run() raises when it is already running on another).
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "tenax/core/storage.hpp"
#include "tenax/kernels/capture.hpp"
#include "tenax/trace/graph.hpp"

namespace tenax::ir {

class Program {
 public:
  explicit Program(const Graph& g);
  // A copy starts unprepared (its own plan, slots and scratch); moves keep the plan.
  Program(const Program& o);
  Program& operator=(const Program& o);
  Program(Program&&) = default;
  Program& operator=(Program&&) = default;

  // inputs: one per graph input; outputs: room for one per graph output.
  void run(const detail::ImplPtr* inputs, std::size_t n_inputs, detail::ImplPtr* outputs);

  const Graph& graph() const { return g_; }
  // Whether output k is an object run() hands out in every run, or twice in one: a graph constant
  // (an input-independent result, folded at trace time) or a value an earlier output already is
  // (common subexpressions merged). Compiled returns a copy of such an output, as eager code would
  // return a fresh tensor, so that writing into one result never changes another or a later run's.
  bool output_shared(std::size_t k) const { return shared_out_[k] != 0; }
  std::size_t traced_nodes() const { return traced_nodes_; }
  std::size_t cse_merged() const { return cse_merged_; }
  std::size_t dce_removed() const { return dce_removed_; }
  // Pairs of steps run as one (GraphNode::joins: exp(A) and L(A, E) from one kernel).
  std::size_t joined() const { return joined_; }
  std::int64_t plan_peak_bytes() const { return peak_bytes_; }
  // The prepared steps: op, inputs, outputs with dtype/shape, values released after each step,
  // and once prepared each step's kind and slot.
  std::string str() const;

  // After the first run: how many steps are prepared kernels and views, the plan's slots and their
  // bytes (0 before).
  bool prepared() const { return prepared_; }
  std::size_t kernel_steps() const;
  std::size_t view_steps() const;
  std::size_t slots() const { return slots_.size(); }
  std::int64_t slot_bytes() const;

 private:
  // One output of a prepared step.
  struct Out {
    std::int32_t value = -1;  // -1: an output the op leaves undefined (a kernel writes nothing there)
    // The output's dtype and layout; offset: kernel, in elements of the buffer; view, in bytes
    // from the base's first element.
    DType dtype = DType::F64;
    Device device;
    Shape shape;
    Strides strides;
    std::int64_t offset = 0;
    // kernel: the contiguous buffer dtype[buffer] the kernel writes, and whether the value is
    // that buffer (or a view of it)
    Shape buffer;
    bool is_buffer = true;
    std::int32_t slot = -1;    // kernel: the plan's slot, or -1 (a pool buffer per run)
    bool in_register = false;  // fused kernel: a value only its chain reads, kept in a block register
    detail::ImplPtr fixed;     // the body when it is the same every run (slot-backed)
    // kernel, a small program output made in a pool buffer: the bodies the last two runs handed
    // out ([0] the last run's), one of them written again by this run when the caller has let it
    // go (recyclable, program.cpp). Two, so that `y = run(x)` in a loop, which still holds the
    // last result while the run makes the next, finds the one before it free.
    bool recycle = false;
    detail::ImplPtr kept[2];
  };
  // One node as prepared by the first run.
  struct Step {
    enum class Kind : std::uint8_t { forward, kernel, view };
    Kind kind = Kind::forward;
    std::vector<Out> outs;  // kernel: one per node output; view: one
    // kernel: the captured kernel and the values its operands read
    detail::KernelFn fn;
    std::array<std::int32_t, detail::kMaxKernelOperands> operands{};
    int n_operands = 0;
    std::int32_t reuse = -1;    // elementwise kernel without slot: an operand whose body it may take
    std::int32_t took = -1;     // elementwise kernel with slot: the operand whose slot it took over
    std::int32_t base = -1;     // view: the base value
    char* fixed_out = nullptr;  // kernel with one output, slot-backed: the buffer it writes
    std::int32_t fused = -1;    // kernel: the chain of maps it runs in (fusions_), or -1
  };
  // A chain of consecutive map steps (first..last) over one shape, run as one loop over blocks of
  // kFuseBlock elements: each map's element loop (KernelCapture::line) in step order on a block,
  // with the values only the chain reads kept in registers (block-sized scratch) instead of
  // buffers. Every element is computed by the same code on the same operands as in the steps'
  // own kernels, so the results are bit-identical.
  struct Fusion {
    struct Operand {
      std::int32_t value = -1;  // the value read or written (for a register: the value it holds)
      std::int32_t reg = -1;    // its register, or -1: memory at ptr_[value] + the block's offset
      std::int64_t stride = 0;  // bytes per element as the map reads it: the element size
      // A memory operand not read in element order (a broadcast row or scalar, a transposed
      // input): each block's elements are gathered into register `reg` first, from ptr_[value]
      // with the byte strides Fusion::gathers[gather] over the chain's shape; -1: none. (The
      // strides live apart so that the maps, walked for every block, stay small.)
      std::int32_t gather = -1;
    };
    struct Map {
      detail::MapLineFn line;
      int n = 0;  // operands, the output's first
      std::array<Operand, detail::kMaxKernelOperands + 1> op{};
    };
    std::size_t first = 0, last = 0;  // steps; with a sum, `last` is the sum's step
    Shape shape;
    std::int64_t numel = 0;
    int registers = 0;
    std::vector<Map> maps;
    std::vector<Strides> gathers;
    // A full sum of the last map's output that ends the chain (sum.feed null: none): fed block by
    // block from that output's register or memory, in runs of sum.block inputs from
    // sum.block_from inputs on (their partial sums in `partials`), so that it computes what the
    // reduction's own kernel computes (kernels/reduce.hpp, SumSteps).
    detail::SumPieces sum;
    Operand sum_in;
    std::vector<char> partials;
  };
  static constexpr std::int64_t kFuseBlock = 256;  // elements per block
  // A chain is fused when it has kFuseMinSteps maps or more, or kFuseMinElements elements or
  // more (its values then leave the caches between steps). Shorter chains of small values ran
  // faster as separate kernel steps (the mlp at 8x16 and 64x256: 0.85-0.9 x the fused time).
  static constexpr std::size_t kFuseMinSteps = 8;
  static constexpr std::int64_t kFuseMinElements = 32768;
  static constexpr int kFuseRegisters = 8;  // registers of kFuseBlock x 16 bytes (on the stack)
  // Outputs up to this size are kept between prepared runs (Out::recycle).
  static constexpr std::int64_t kRecycleMaxBytes = 64 * 1024;
  const Out& out_of(std::int32_t v) const;  // the prepared output record of value v
  void check_step(std::size_t k) const;     // anomaly mode
  void forward_step(std::size_t k, bool in_place, bool borrowing = false);
  void run_forward(bool anomaly, bool in_place);
  void run_capture();
  void run_prepared();
  struct Seen;    // what the first run saw at one step (program.cpp)
  struct Groups;  // the values grouped by the storage they share (program.cpp)
  void prepare(const std::vector<Seen>& seen);
  // prepare's steps (program.cpp)
  static void record_layout(Out& o, std::int32_t v, const detail::TensorImpl& y);
  void classify_step(std::size_t k, const Seen& at);
  bool make_kernel_step(std::size_t k, const Seen& at);
  bool kernel_outs(std::size_t k, const Seen& at, std::vector<Out>& outs) const;
  bool bind_operands(std::size_t k, const Seen& at);
  void make_view_step(std::size_t k, const Seen& at);
  Groups group_values() const;
  void pin_groups(Groups& groups) const;
  std::vector<std::int64_t> assign_slots(const Groups& groups, const std::vector<Seen>& seen);
  std::int32_t take_operand_slot(std::size_t k, const Out& o, const Groups& groups, std::vector<std::int32_t>& slot_of);
  void offer_operand_body(std::size_t k, const Out& o, const Seen& at);
  void make_slot_storage(const std::vector<std::int64_t>& capacity);
  void make_fixed_bodies();
  void plan_environment();
  void fuse_maps(const std::vector<Seen>& seen);
  bool fusible(std::size_t k, const Seen& at) const;
  bool sums_chain(std::size_t k, std::size_t last_map, const Seen& at) const;
  bool make_fusion(std::size_t first, std::size_t last, bool with_sum, const std::vector<Seen>& seen);
  void run_fused(Fusion& f);
  void define(std::int32_t v, detail::ImplPtr&& body);
  bool inputs_match_plan() const;
  bool storage_distinct() const;
  Graph g_;
  std::vector<std::vector<std::int32_t>> release_;  // per node: values dead after it
  std::vector<std::int32_t> in_place_;              // per node: the input it may overwrite, or -1
  std::vector<detail::ImplPtr> env_;
  std::vector<char> is_constant_, is_input_;
  std::vector<std::int64_t> def_, last_;  // per value: defining step, last reading step (-1: none)
  // The values whose body is the same every run (Out::fixed): a prepared run borrows it into env_
  // (Ref::borrow, no atomic count; the step's Out::fixed keeps it alive) and detaches it at its
  // release. borrowed_: per value, whether it is one.
  std::vector<std::int32_t> fixed_values_;
  std::vector<char> borrowed_;
  // A prepared run reads operands through ptr_ (per value: its first element; fixed for constants
  // and slot-backed values, set per run for the others when they are made) and puts a body into
  // env_ only where something reads env_: a forward step's input, a program output, the base of a
  // view made per run, or a value whose body is made per run. release_run_: per step, the values
  // whose env_ entry it gives up (release_ less the slot-backed values env_ never holds).
  std::vector<char*> ptr_;
  std::vector<char> keep_env_;
  std::vector<std::vector<std::int32_t>> release_run_;
  std::vector<Step> steps_;  // per node, after the first run
  std::vector<Fusion> fusions_;
  std::vector<detail::Storage> slots_;  // the static plan's buffers
  std::vector<Strides> input_strides_;  // the input layouts the plan was made for
  std::vector<char> shared_out_;        // per output: output_shared
  std::vector<char> move_out_;          // per output: moved out of env_ (else copied)
  bool prepared_ = false;
  // Set while run() runs (a copy or move starts clear): a second thread's run raises.
  struct RunFlag {
    std::atomic<bool> on{false};
    RunFlag() = default;
    RunFlag(const RunFlag&) {}
    RunFlag& operator=(const RunFlag&) { return *this; }
  } running_;
  std::size_t traced_nodes_ = 0, cse_merged_ = 0, dce_removed_ = 0, joined_ = 0;
  std::int64_t peak_bytes_ = 0;
};

}  // namespace tenax::ir
