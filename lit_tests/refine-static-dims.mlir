// RUN: pyfront-opt %s --split-input-file --hoist-entry-guards --refine-static-dims | filecheck %s

/// `x @ W` with x's contraction dim relaxed: the front end guards
/// `x.shape[1] == 12`, hoisted to the entry check. Inside the call that dim
/// is 12: x is cast once at the start, the primitives read the cast and get
/// static result types from their rules; a result returned with its old
/// type is cast back for the return.

// CHECK-LABEL: func.func @matmul_pins_contraction
// CHECK-SAME:    "[\22eq\22, [\22dim\22, 0, 1], [\22const\22, 12]]"
// CHECK:         %[[X:.*]] = tensor.cast %arg0 : tensor<4x?xf32> to tensor<4x12xf32>
// CHECK:         %[[T:.*]] = "pyfront.tanh"(%[[X]]) : (tensor<4x12xf32>) -> tensor<4x12xf32>
// CHECK:         %[[BACK:.*]] = tensor.cast %[[T]] : tensor<4x12xf32> to tensor<4x?xf32>
// CHECK:         %[[M:.*]] = "pyfront.matmul"(%[[X]], %arg1) : (tensor<4x12xf32>, tensor<12x3xf32>) -> tensor<4x3xf32>
// CHECK:         %[[S:.*]] = "pyfront.sum"(%[[T]]) {{.*}} : (tensor<4x12xf32>) -> tensor<4xf32>
// CHECK:         return %[[M]], %[[BACK]], %[[S]] : tensor<4x3xf32>, tensor<4x?xf32>, tensor<4xf32>
func.func @matmul_pins_contraction(%x: tensor<4x?xf32>, %w: tensor<12x3xf32>) -> (tensor<4x3xf32>, tensor<4x?xf32>, tensor<4xf32>) {
  %t = "pyfront.tanh"(%x) : (tensor<4x?xf32>) -> tensor<4x?xf32>
  %m = "pyfront.matmul"(%x, %w) : (tensor<4x?xf32>, tensor<12x3xf32>) -> tensor<4x3xf32>
  %c1 = arith.constant 1 : index
  %d = tensor.dim %x, %c1 : tensor<4x?xf32>
  %c12 = arith.constant 12 : index
  %eq = arith.cmpi eq, %d, %c12 : index
  "pyfront.guard"(%eq) {kind = "shape", reason = "np.matmul: sizes that vary between calls agree", site = "m.py:2"} : (i1) -> ()
  %s = "pyfront.sum"(%t) {axes = array<i64: 1>, keepdims = false} : (tensor<4x?xf32>) -> tensor<4xf32>
  return %m, %t, %s : tensor<4x3xf32>, tensor<4x?xf32>, tensor<4xf32>
}

// -----

/// `x + y` with x's first dim relaxed and y static (4, 6): the add's rule
/// already makes its result static, but other ops on x did not know. The
/// fact `dim == 4` is one conjunct of the guard (`dim >= 2` pins nothing);
/// static types flow through unary ops, transpose and a reshape with -1.

// CHECK-LABEL: func.func @broadcast_pins_batch
// CHECK:         %[[X:.*]] = tensor.cast %arg0 : tensor<?x6xf32> to tensor<4x6xf32>
// CHECK:         "pyfront.add"(%[[X]], %arg1) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK:         "pyfront.negative"(%[[X]]) : (tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK:         "pyfront.transpose"({{.*}}) {{.*}} : (tensor<4x6xf32>) -> tensor<6x4xf32>
// CHECK:         %[[R:.*]] = "pyfront.reshape"({{.*}}) {{.*}} : (tensor<6x4xf32>) -> tensor<12x2xf32>
// CHECK:         %[[BACK:.*]] = tensor.cast %[[R]] : tensor<12x2xf32> to tensor<?x2xf32>
// CHECK:         return %{{.*}}, %[[BACK]] : tensor<4x6xf32>, tensor<?x2xf32>
func.func @broadcast_pins_batch(%x: tensor<?x6xf32>, %y: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<?x2xf32>) {
  %a = "pyfront.add"(%x, %y) : (tensor<?x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x6xf32>
  %c4 = arith.constant 4 : index
  %c2 = arith.constant 2 : index
  %eq = arith.cmpi eq, %c4, %d : index
  %ge = arith.cmpi sge, %d, %c2 : index
  %both = arith.andi %ge, %eq : i1
  "pyfront.guard"(%both) {kind = "shape", reason = "np.add: sizes that vary between calls agree", site = "m.py:3"} : (i1) -> ()
  %n = "pyfront.negative"(%x) : (tensor<?x6xf32>) -> tensor<?x6xf32>
  %t = "pyfront.transpose"(%n) {perm = array<i64: 1, 0>} : (tensor<?x6xf32>) -> tensor<6x?xf32>
  %r = "pyfront.reshape"(%t) {shape = array<i64: -1, 2>} : (tensor<6x?xf32>) -> tensor<?x2xf32>
  return %a, %r : tensor<4x6xf32>, tensor<?x2xf32>
}

// -----

/// Two dynamic dims guarded equal are still not a constant: nothing changes.

// CHECK-LABEL: func.func @dims_equal_stay_dynamic
// CHECK-NOT:     tensor.cast
// CHECK:         "pyfront.add"(%arg0, %arg1) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
func.func @dims_equal_stay_dynamic(%x: tensor<?x8xf32>, %h: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x8xf32>
  %d1 = tensor.dim %h, %c0 : tensor<?x8xf32>
  %eq = arith.cmpi eq, %d0, %d1 : index
  "pyfront.guard"(%eq) {kind = "shape", reason = "np.add: sizes that vary between calls agree", site = "m.py:4"} : (i1) -> ()
  %y = "pyfront.add"(%x, %h) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

/// A guard on a computed value stays in the graph, where it is checked only
/// after the compiled code ran: its fact is not used (a cast to a shape the
/// value does not have would be undefined). Neither is a bound (`>=`).

// CHECK-LABEL: func.func @in_graph_guard_not_used
// CHECK-NOT:     tensor.cast
// CHECK:         "pyfront.guard"{{.*}}site = "m.py:5"
// CHECK:         "pyfront.matmul"(%{{.*}}, %arg1) : (tensor<4x?xf32>, tensor<12x3xf32>) -> tensor<4x3xf32>
// CHECK:         "pyfront.negative"(%arg0) : (tensor<4x?xf32>) -> tensor<4x?xf32>
func.func @in_graph_guard_not_used(%x: tensor<4x?xf32>, %w: tensor<12x3xf32>) -> (tensor<4x3xf32>, tensor<4x?xf32>) {
  %e = "pyfront.exp"(%x) : (tensor<4x?xf32>) -> tensor<4x?xf32>
  %c1 = arith.constant 1 : index
  %d = tensor.dim %e, %c1 : tensor<4x?xf32>
  %c12 = arith.constant 12 : index
  %eq = arith.cmpi eq, %d, %c12 : index
  "pyfront.guard"(%eq) {kind = "shape", reason = "np.matmul: sizes that vary between calls agree", site = "m.py:5"} : (i1) -> ()
  %dx = tensor.dim %x, %c1 : tensor<4x?xf32>
  %ge = arith.cmpi sge, %dx, %c12 : index
  "pyfront.guard"(%ge) {kind = "shape", reason = "x[:, :12] is within bounds", site = "m.py:6"} : (i1) -> ()
  %m = "pyfront.matmul"(%e, %w) : (tensor<4x?xf32>, tensor<12x3xf32>) -> tensor<4x3xf32>
  %n = "pyfront.negative"(%x) : (tensor<4x?xf32>) -> tensor<4x?xf32>
  return %m, %n : tensor<4x3xf32>, tensor<4x?xf32>
}
