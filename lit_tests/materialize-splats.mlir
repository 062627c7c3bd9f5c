// RUN: not pyfront-opt %s --split-input-file --lower-to-linalg --materialize-splats --canonicalize --cse 2>/dev/null \
// RUN:   | filecheck %s
// RUN: not pyfront-opt %s --split-input-file --lower-to-linalg --materialize-splats 2>&1 | filecheck %s --check-prefix=ERR

/// `(x == x).sum()` on ints: the compare folds to true once its two operands
/// (one tensor) are deduplicated, so the sum reads a splat constant, not a
/// generic that IREE would turn into a fill and fold into the reduction.

// CHECK-LABEL: func.func @eq_self_sum
// CHECK:         %[[ONES:.*]] = arith.constant dense<1> : tensor<5xi64>
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[ONES]] : tensor<5xi64>)
// CHECK-NOT:     arith.cmpi
func.func @eq_self_sum(%x: tensor<5xi64>) -> tensor<i64> {
  %0 = "pyfront.equal"(%x, %x) : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi1>
  %1 = "pyfront.astype"(%0) {dtype = "int64"} : (tensor<5xi1>) -> tensor<5xi64>
  %2 = "pyfront.sum"(%1) {axes = array<i64: 0>, keepdims = false} : (tensor<5xi64>) -> tensor<i64>
  return %2 : tensor<i64>
}

// -----

/// `np.where(b > -0.25, 2, b)` on bools is always 2, which only shows once
/// the uitofp, the compare and the select are fused: a 0-d result IREE
/// proves constant becomes the constant itself, for the result and for exp.

// CHECK-LABEL: func.func @where_always
// CHECK:         %[[TWO:.*]] = arith.constant dense<2> : tensor<i64>
// CHECK-NOT:     arith.select
// CHECK:         linalg.generic {{.*}} ins(%[[TWO]] : tensor<i64>)
// CHECK:           arith.sitofp
// CHECK:           math.exp
// CHECK:         return %[[TWO]], %{{.*}} : tensor<i64>, tensor<f64>
func.func @where_always(%b: tensor<i1>) -> (tensor<i64>, tensor<f64>) {
  %0 = "pyfront.astype"(%b) {dtype = "float64"} : (tensor<i1>) -> tensor<f64>
  %m = arith.constant dense<-2.500000e-01> : tensor<f64>
  %1 = "pyfront.greater"(%0, %m) : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %two = arith.constant dense<2> : tensor<i64>
  %2 = "pyfront.astype"(%b) {dtype = "int64"} : (tensor<i1>) -> tensor<i64>
  %3 = "pyfront.where"(%1, %two, %2) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
  %f = "pyfront.astype"(%3) {dtype = "float64"} : (tensor<i64>) -> tensor<f64>
  %4 = "pyfront.exp"(%f) : (tensor<f64>) -> tensor<f64>
  return %3, %4 : tensor<i64>, tensor<f64>
}

// -----

/// A sum over values that are not constant is left alone, and so is the
/// elementwise producer it reads (IREE fuses it into the reduction itself).

// CHECK-LABEL: func.func @square_sum
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel"]
// CHECK:           arith.mulf
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK-NOT:     arith.constant dense<{{.*}}> : tensor<8xf64>
func.func @square_sum(%x: tensor<8xf64>) -> tensor<f64> {
  %0 = "pyfront.multiply"(%x, %x) : (tensor<8xf64>, tensor<8xf64>) -> tensor<8xf64>
  %1 = "pyfront.sum"(%0) {axes = array<i64: 0>, keepdims = false} : (tensor<8xf64>) -> tensor<f64>
  return %1 : tensor<f64>
}

// -----

/// With a dynamic size there is no splat constant to stand for the value:
/// the pass refuses (the JIT runs such calls in the interpreter).

// ERR: a reduction over a value that is constant, with a dynamic shape

func.func @dynamic(%x: tensor<?xi64>) -> tensor<i64> {
  %0 = "pyfront.equal"(%x, %x) : (tensor<?xi64>, tensor<?xi64>) -> tensor<?xi1>
  %1 = "pyfront.astype"(%0) {dtype = "int64"} : (tensor<?xi1>) -> tensor<?xi64>
  %2 = "pyfront.sum"(%1) {axes = array<i64: 0>, keepdims = false} : (tensor<?xi64>) -> tensor<i64>
  return %2 : tensor<i64>
}
