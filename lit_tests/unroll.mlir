// RUN: pyfront-opt %s --split-input-file --unroll | filecheck %s
// RUN: env PYFRONT_UNROLL_BUDGET=4 pyfront-opt %s --split-input-file --unroll | filecheck %s --check-prefix=BUDGET
// RUN: env PYFRONT_UNROLL_BUDGET=6 pyfront-opt %s --split-input-file --unroll | filecheck %s --check-prefix=TOTAL

/// `for t in range(3): h = np.tanh(h + x[t])` as the front end emits it: an
/// scf.for with constant bounds (the trip count is fixed by the variant's key,
/// `range(3)`, so it needs no in-graph guard). Unrolled: three copies of the
/// body, in order, each with its counter as a constant, chained through `h`.

// CHECK-LABEL: func.func @rnn
// CHECK-NOT:     scf.for
// CHECK:         %[[I0:.*]] = arith.constant 0 : index
// CHECK:         %[[T0:.*]] = "pyfront.take"(%arg1, %{{.*}})
// CHECK:         %[[A0:.*]] = "pyfront.add"(%arg0, %[[T0]])
// CHECK:         %[[H1:.*]] = "pyfront.tanh"(%[[A0]])
// CHECK:         %[[I1:.*]] = arith.constant 1 : index
// CHECK:         %[[A1:.*]] = "pyfront.add"(%[[H1]], %{{.*}})
// CHECK:         %[[H2:.*]] = "pyfront.tanh"(%[[A1]])
// CHECK:         %[[I2:.*]] = arith.constant 2 : index
// CHECK:         %[[A2:.*]] = "pyfront.add"(%[[H2]], %{{.*}})
// CHECK:         %[[H3:.*]] = "pyfront.tanh"(%[[A2]])
// CHECK-NOT:     "pyfront.tanh"
// CHECK:         return %[[H3]]

/// Over budget (3 iterations x 6 body ops > 4), the loop stays.
// BUDGET-LABEL: func.func @rnn
// BUDGET:         scf.for
// BUDGET-COUNT-1: "pyfront.tanh"
func.func @rnn(%h0: tensor<4xf32>, %x: tensor<3x4xf32>) -> tensor<4xf32> {
  %lb = arith.constant 0 : index
  %ub = arith.constant 3 : index
  %st = arith.constant 1 : index
  %h = scf.for %i = %lb to %ub step %st iter_args(%h1 = %h0) -> (tensor<4xf32>) {
    %i64 = arith.index_cast %i : index to i64
    %it = tensor.from_elements %i64 : tensor<i64>
    %xt = "pyfront.take"(%x, %it) : (tensor<3x4xf32>, tensor<i64>) -> tensor<4xf32>
    %a = "pyfront.add"(%h1, %xt) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t = "pyfront.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  }
  return %h : tensor<4xf32>
}

// -----

/// A start and a step: counters 2 and 5 for `range(2, 7, 3)`.

// CHECK-LABEL: func.func @strided
// CHECK-NOT:     scf.for
// CHECK:         arith.constant 2 : index
// CHECK:         "pyfront.exp"
// CHECK:         arith.constant 5 : index
// CHECK:         "pyfront.exp"
// CHECK-NOT:     "pyfront.exp"
func.func @strided(%h0: tensor<4xf32>) -> tensor<4xf32> {
  %lb = arith.constant 2 : index
  %ub = arith.constant 7 : index
  %st = arith.constant 3 : index
  %h = scf.for %i = %lb to %ub step %st iter_args(%h1 = %h0) -> (tensor<4xf32>) {
    %i64 = arith.index_cast %i : index to i64
    %e = "pyfront.exp"(%h1) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %e : tensor<4xf32>
  }
  return %h : tensor<4xf32>
}

// -----

/// A loop over a dynamic dim (`for row in x` with a relaxed first dim) has
/// no constant trip count and stays a loop.

// CHECK-LABEL: func.func @dynamic_trip_count
// CHECK:         scf.for
func.func @dynamic_trip_count(%h0: tensor<4xf32>, %x: tensor<?x4xf32>) -> tensor<4xf32> {
  %lb = arith.constant 0 : index
  %ub = tensor.dim %x, %lb : tensor<?x4xf32>
  %st = arith.constant 1 : index
  %h = scf.for %i = %lb to %ub step %st iter_args(%h1 = %h0) -> (tensor<4xf32>) {
    %e = "pyfront.exp"(%h1) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %e : tensor<4xf32>
  }
  return %h : tensor<4xf32>
}

// -----

/// The budget covers the module: two loops of 2 iterations x 2 body ops each
/// (exp and the yield) fit a budget of 16 together, but with 6 only the first
/// is unrolled (4 ops), and the second (4 more) stays a loop.

// CHECK-LABEL: func.func @two_loops
// CHECK-NOT:     scf.for
// TOTAL-LABEL: func.func @two_loops
// TOTAL-COUNT-2: "pyfront.exp"
// TOTAL:         scf.for
// TOTAL-COUNT-1: "pyfront.tanh"
// TOTAL-NOT:     scf.for
func.func @two_loops(%h0: tensor<4xf32>) -> tensor<4xf32> {
  %lb = arith.constant 0 : index
  %ub = arith.constant 2 : index
  %st = arith.constant 1 : index
  %h = scf.for %i = %lb to %ub step %st iter_args(%h1 = %h0) -> (tensor<4xf32>) {
    %e = "pyfront.exp"(%h1) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %e : tensor<4xf32>
  }
  %g = scf.for %i = %lb to %ub step %st iter_args(%g1 = %h) -> (tensor<4xf32>) {
    %t = "pyfront.tanh"(%g1) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  }
  return %g : tensor<4xf32>
}

// -----

/// Kernels bound IREE's compile time: 33 iterations x 2 ops that are not
/// elementwise (a matmul and a sum) are 66, over MAX_KERNELS (64): the loop
/// stays, although its 33 x 4 ops fit the op budget. 32 iterations (64) fit.

// CHECK-LABEL: func.func @kernels
// TOTAL-LABEL: func.func @kernels
// CHECK:         scf.for
// CHECK-COUNT-1: "pyfront.matmul"
// CHECK-LABEL: func.func @kernels_within_budget
// CHECK-NOT:     scf.for
// CHECK-COUNT-32: "pyfront.matmul"
func.func @kernels(%w0: tensor<3xf64>, %x: tensor<5x3xf64>) -> tensor<3xf64> {
  %lb = arith.constant 0 : index
  %ub = arith.constant 33 : index
  %st = arith.constant 1 : index
  %w = scf.for %i = %lb to %ub step %st iter_args(%w1 = %w0) -> (tensor<3xf64>) {
    %z = "pyfront.matmul"(%x, %w1) : (tensor<5x3xf64>, tensor<3xf64>) -> tensor<5xf64>
    %s = "pyfront.sum"(%z) {axes = array<i64: 0>, keepdims = false} : (tensor<5xf64>) -> tensor<f64>
    %n = "pyfront.subtract"(%w1, %s) : (tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
    scf.yield %n : tensor<3xf64>
  }
  return %w : tensor<3xf64>
}
func.func @kernels_within_budget(%w0: tensor<3xf64>, %x: tensor<5x3xf64>) -> tensor<3xf64> {
  %lb = arith.constant 0 : index
  %ub = arith.constant 32 : index
  %st = arith.constant 1 : index
  %w = scf.for %i = %lb to %ub step %st iter_args(%w1 = %w0) -> (tensor<3xf64>) {
    %z = "pyfront.matmul"(%x, %w1) : (tensor<5x3xf64>, tensor<3xf64>) -> tensor<5xf64>
    %s = "pyfront.sum"(%z) {axes = array<i64: 0>, keepdims = false} : (tensor<5xf64>) -> tensor<f64>
    %n = "pyfront.subtract"(%w1, %s) : (tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
    scf.yield %n : tensor<3xf64>
  }
  return %w : tensor<3xf64>
}
